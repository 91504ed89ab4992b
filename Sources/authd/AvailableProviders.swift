import AuthKernel
import EmailProvider

/// The providers compiled into this binary, in the default order of `providers`.
let availableProviders = ProviderRegistry([EmailProvider.self])
