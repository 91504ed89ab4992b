import AuthdServer

// authd with the providers that come with it; a custom server passes its own list (see AuthdServer).
await Authd.main(providers: Authd.builtInProviders)
