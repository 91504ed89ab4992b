import AuthKernel
import JWTKit

/// Apple's public keys: the SDK's ``RemoteKeySet`` at `apple.jwks_url`, read into JWTKit's
/// collection once per set fetched.
actor AppleKeySet {
    let remote: RemoteKeySet
    private var collection: (generation: Int, keys: JWTKeyCollection)?

    init(remote: RemoteKeySet) { self.remote = remote }

    /// JWTKit's collection of the set that has `kid`.
    func keys(for kid: String) async throws -> JWTKeyCollection {
        let fetched = try await remote.keys(for: kid)
        if let collection, collection.generation == fetched.generation { return collection.keys }
        let keys = JWTKeyCollection()
        try await keys.add(jwksJSON: fetched.json)
        collection = (fetched.generation, keys)
        return keys
    }
}
