import AuthKernel
import AuthStorage
import Foundation

/// The console's operators (contract §14): users granted the role by `authd admins grant` or an
/// invite. One record per operator beside the one-time codes, as service keys are kept, so both
/// backends hold them without a schema of their own and the role is one keyed read per request.
struct Operators: Sendable {
    let store: any AuthStore
    let clock: any AuthClock

    static let purpose = "console.operator"
    /// The invite links' single-use tokens.
    static let invitePurpose = "console.invite"
    /// An invite's lifetime: a day.
    static let inviteTTL = 86_400

    /// An operator as `authd admins list` shows one.
    struct Operator: Sendable, Equatable {
        var userID: UUID
        var email: String
        var grantedAt: Date
        /// Who granted it: "authd admins grant", "an invite", or an operator's email.
        var grantedBy: String
    }

    /// Whether the user holds the role.
    func isOperator(_ userID: UUID) async throws -> Bool {
        let key = userID.lowercased
        return try await store.read([.code(purpose: Self.purpose, key: key)]) { $0.code(purpose: Self.purpose, key: key) != nil }
    }

    /// Grants the role (again: nothing changes). The user must have a verified email.
    /// - Throws: 409 `INVALID_STATE` for a user without one.
    func grant(_ user: UserRecord, by grantor: String) async throws {
        guard let email = user.email, user.emailVerified else {
            throw AuthError.invalidState("An operator needs a verified email: \(user.email ?? user.id.lowercased) has none.")
        }
        let key = user.id.lowercased, now = clock.now()
        try await store.write([.code(purpose: Self.purpose, key: key)]) { state in
            guard state.code(purpose: Self.purpose, key: key) == nil else { return }
            state.put(CodeRecord(
                purpose: Self.purpose, key: key, digest: "", sentAt: now, expiresAt: SessionRecord.neverExpires,
                payload: ["email": .string(email), "granted_by": .string(grantor)]))
        }
    }

    /// Takes the role away.
    /// - Returns: whether the user held it.
    @discardableResult
    func revoke(_ userID: UUID) async throws -> Bool {
        let key = userID.lowercased
        return try await store.write([.code(purpose: Self.purpose, key: key)]) { state in
            guard state.code(purpose: Self.purpose, key: key) != nil else { return false }
            state.deleteCode(id: CodeRecord.id(purpose: Self.purpose, key: key))
            return true
        }
    }

    /// Every operator, by email.
    func list() async throws -> [Operator] {
        try await store.read([.codesOfPurpose(Self.purpose)]) { state in
            state.codes(purpose: Self.purpose).compactMap { record -> Operator? in
                guard let id = UUID(uuidString: record.key) else { return nil }
                var email = "", grantor = ""
                if case .string(let e)? = record.payload?["email"] { email = e }
                if case .string(let g)? = record.payload?["granted_by"] { grantor = g }
                return Operator(userID: id, email: email, grantedAt: record.sentAt, grantedBy: grantor)
            }.sorted { $0.email < $1.email }
        }
    }
}
