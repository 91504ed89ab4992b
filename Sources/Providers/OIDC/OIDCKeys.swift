import AuthKernel
import Foundation
import JWTKit

/// An upstream's key set, read once per set fetched: Ed25519 keys (`OKP`) as their 32 bytes for
/// libsodium, RSA and P-256 keys in a JWTKit collection. A key is found by `kid` and must be of the
/// type the token's algorithm names.
struct OIDCKeys: Sendable {
    private struct JWK: Decodable {
        var kid: String?
        var kty: String
        var crv: String?
        var x: String?
        var use: String?
    }
    private struct KeySet: Decodable { var keys: [JWK] }

    /// `kid` → the key's type: `RSA`, `EC P-256` or `OKP Ed25519`.
    let types: [String: String]
    /// `kid` → an Ed25519 public key.
    let ed25519: [String: [UInt8]]
    /// The RSA and EC keys by the algorithm they verify (`RS256`, `PS256`, `ES256`), each named
    /// with it: JWTKit binds a key published without `alg` to the first algorithm it meets, and one
    /// key may sign both RS256 and PS256.
    let collections: [String: JWTKeyCollection]

    /// Reads a set (throws when it is not one, and the old set is kept), its RSA and EC keys into
    /// JWTKit (only those: it need not read the others).
    static func load(json: String) async throws -> OIDCKeys {
        let set = try JSONDecoder().decode(KeySet.self, from: Data(json.utf8))
        var types: [String: String] = [:], ed25519: [String: [UInt8]] = [:]
        for key in set.keys where key.use == nil || key.use == "sig" {
            guard let kid = key.kid, !kid.isEmpty, kid.utf8.count <= 256 else { continue }
            switch (key.kty, key.crv) {
            case ("OKP", "Ed25519"?):
                guard let x = key.x.flatMap(Base64URL.decode), x.count == 32 else { continue }
                (types[kid], ed25519[kid]) = ("OKP Ed25519", x)
            case ("RSA", _): types[kid] = "RSA"
            case ("EC", "P-256"?): types[kid] = "EC P-256"
            default: continue
            }
        }
        guard case .object(let object) = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)), case .array(let all)? = object["keys"] else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no keys"))
        }
        var collections: [String: JWTKeyCollection] = [:]
        for (alg, kty) in [("RS256", "RSA"), ("PS256", "RSA"), ("ES256", "EC")] {
            let keys: [JSONValue] = all.compactMap { key in
                guard case .object(var k) = key, case .string(kty)? = k["kty"], case .string(let kid)? = k["kid"], types[kid] != nil else { return nil }
                if case .string(let named)? = k["alg"], named != alg { return nil }
                k["alg"] = .string(alg)
                return .object(k)
            }
            guard !keys.isEmpty else { continue }
            let collection = JWTKeyCollection()
            try await collection.add(jwksJSON: String(decoding: try JSONEncoder().encode(JSONValue.object(["keys": .array(keys)])), as: UTF8.self))
            collections[alg] = collection
        }
        return OIDCKeys(types: types, ed25519: ed25519, collections: collections)
    }
}
