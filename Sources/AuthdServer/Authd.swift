import AuthdCore
public import AuthKernel
import AnonymousProvider
import AppleProvider
import ArgumentParser
import EmailProvider
import PINProvider
import PasswordProvider
import PasskeyProvider
import ApprovalProvider
import OIDCProvider
import TOTPProvider
import Synchronization

/// The `authd` command line (`serve` and the admin commands) for a chosen set of providers.
///
/// A server with a provider of your own is a ten-line executable:
///
/// ```swift
/// import AuthdServer
/// import InviteCodeProvider
///
/// @main struct MyAuthd {
///     static func main() async {
///         await Authd.main(providers: Authd.builtInProviders + [InviteCodeProvider.self])
///     }
/// }
/// ```
public enum Authd {
    /// The providers that come with authd, in the default order of `providers`: email codes, PINs
    /// (which bring anonymous sign-in and user names along), passwords, Sign in with Apple (started
    /// only when listed, as it needs `apple.audiences`), anonymous sign-in on its own, the TOTP
    /// second factor with recovery codes, passkeys, sign-in approved from another device, and
    /// sign-in with other OpenID Providers (these five started only when listed).
    public static let builtInProviders: [any AuthProvider.Type] = [
        EmailProvider.self, PINProvider.self, PasswordProvider.self, AppleProvider.self, AnonymousProvider.self, TOTPProvider.self,
        PasskeyProvider.self, ApprovalProvider.self, OIDCProvider.self,
    ]

    /// Parses the process's arguments and runs the command (`authd serve`, `authd users list`, …)
    /// with `providers` available to the configuration's `providers` list; exits when it is done.
    public static func main(providers: [any AuthProvider.Type]) async {
        registry.withLock { $0 = ProviderRegistry(providers) }
        await AuthdCommand.main()
    }

    /// The providers this process was started with.
    static let registry = Mutex(ProviderRegistry(builtInProviders))

    /// ``registry``'s current value.
    static var providers: ProviderRegistry { registry.withLock { $0 } }
}
