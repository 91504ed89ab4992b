import AuthKernel
import EmailProvider
import PINProvider
import PasswordProvider

/// The providers compiled into this binary, in the default order of `providers`.
let availableProviders = ProviderRegistry([EmailProvider.self, PINProvider.self, PasswordProvider.self])
