import AuthKernel
import AuthKernelTesting
import AuthStorage
import Foundation
import HTTPTypes
import PasswordProvider
import Testing

/// Contract §11: a password hash brought over from another system (as `import-users` stores it)
/// signs its user in with the old password at the first sign-in and is then replaced by Argon2id.
struct ImportedHashTests {
    typealias T = PasswordTest
    static let password = "correct horse battery"

    /// Made by Python's `bcrypt`, `hashlib` (Django's format) and `argon2-cffi` (parallelism 4).
    static let hashes = [
        "$2b$04$pgxRUqpoOU6vWceTKbSjKeQFmiRdd2u8CaByU4Jft2CmytirFjeKm",
        "pbkdf2_sha256$1000$Q8qzJvYCbWkd$yfFpy5MXMu2vVWdmk/cgRNFPEWnEZ5A7PfqBjDDP0mE=",
        "bcrypt_sha256$$2b$04$4EI/aghGCDlD6rVRS5I.vObQzOiIlblAs0.0T0Taoo/xjcgbqcXf2",
        "argon2$argon2id$v=19$m=8192,t=1,p=4$SaOKujm2vQReHXB55+DFUQ$EsOtIwpyde/wpniJQPh5+dkqboHqyz5sptrQGUYhvfc",
    ]

    static func plant(_ h: TestHarness, email: String, hash: String) async throws -> UUID {
        let user = try await h.kernel.users.signIn(
            .init(identity: Identity(provider: "password", subject: email), email: email, emailVerified: true), linkingTo: nil)
        _ = try await h.kernel.users.update(user.id) { user in
            try user.setSecret("password", ["hash": JSONValue.string("import$" + hash), "failures": .number(0), "changed_at": .number(0)])
        }
        return user.id
    }

    static func storedHash(_ h: TestHarness, _ id: UUID) async throws -> String? {
        guard case .object(let o)? = try await h.kernel.users.user(id: id)?.secrets["password"], case .string(let hash)? = o["hash"] else { return nil }
        return hash
    }

    @Test(arguments: hashes)
    func theOldPasswordSignsInOnceAndTheHashBecomesArgon2id(_ hash: String) async throws {
        let h = try await T.harness()
        let email = "imported@example.com"
        let id = try await Self.plant(h, email: email, hash: hash)
        try await h.test { client async throws in
            #expect(try await T.login(client, email, "correct horse batterY").status == .unauthorized)
            #expect(try await Self.storedHash(h, id)?.hasPrefix("import$") == true, "a wrong password replaces nothing")
            #expect(try await T.login(client, email, Self.password).status == .ok)
            let replaced = try #require(try await Self.storedHash(h, id))
            #expect(replaced.hasPrefix("$argon2id$"), "replaced at the first sign-in")
            #expect(try await T.login(client, email, Self.password).status == .ok, "and the new hash signs in too")
        }
    }

    @Test func changingThePasswordChecksTheImportedHash() async throws {
        let h = try await T.harness()
        let email = "changer@example.com"
        let id = try await Self.plant(h, email: email, hash: Self.hashes[0])
        let session = try await h.kernel.sessions.startSession(try #require(try await h.kernel.users.user(id: id)), amr: ["test"], device: .none)
        try await h.test { client async throws in
            let wrong = try await client.send(
                .post, "/api/v1/auth/password/change", json: ["current_password": "nope nope nope", "new_password": "a brand new secret"], bearer: session.accessToken)
            #expect(wrong.errorCode == "INVALID_CREDENTIALS")
            let changed = try await client.send(
                .post, "/api/v1/auth/password/change", json: ["current_password": Self.password, "new_password": "a brand new secret"], bearer: session.accessToken)
            #expect(changed.status == .noContent)
            #expect(try await Self.storedHash(h, id)?.hasPrefix("$argon2id$") == true)
        }
    }
}
