import AuthdServer
import InviteCodeProvider

// authd with its built-in providers and one of ours: every command of `authd` (serve, check, users…).
@main struct InviteAuthd {
    static func main() async {
        await Authd.main(providers: Authd.builtInProviders + [InviteCodeProvider.self])
    }
}
