import AppleProvider
import AuthKernel
import EmailProvider
import PINProvider
import PasswordProvider

/// The providers compiled into this binary, in the default order of `providers`.
/// `apple` needs `apple.audiences`, so it is not started unless listed.
let availableProviders = ProviderRegistry([EmailProvider.self, PINProvider.self, PasswordProvider.self, AppleProvider.self])
