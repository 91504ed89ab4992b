package import Foundation

// The journal's and the snapshot's JSON for the records nearly every write touches, written by
// hand: keys sorted, dates as Unix seconds and absent optionals omitted, as `StoreCoding.encoder()`
// writes them, so either form reads back with `JSONDecoder` or `JSONReader` (tested in JSONWriterTests).

extension StoreChange {
    /// Writes the change as one JSON object; records without a hand-written form go through `fallback`.
    package func write(to w: inout JSONWriter, fallback: JSONEncoder) throws {
        switch self {
        case .putUser(let u): Self.write(.putUser, "user", to: &w) { u.write(storedTo: &$0) }
        case .putSession(let s): Self.write(.putSession, "session", to: &w) { s.write(to: &$0) }
        case .deleteUser(let id): Self.write(.deleteUser, id: id, to: &w)
        case .deleteSession(let id): Self.write(.deleteSession, id: id, to: &w)
        case .deleteJob(let id): Self.write(.deleteJob, id: id, to: &w)
        case .rotateSession(let r): Self.write(.rotateSession, "rotation", to: &w) { r.write(to: &$0) }
        // A sign-in approval's start is one write of these two: by hand too.
        case .putApproval(let a):
            w.beginObject()
            w.key("approval"); a.write(to: &w)
            w.key("op"); w.string(Op.putApproval.rawValue)
            w.endObject()
        case .putJob(let j):
            w.beginObject()
            w.key("job"); j.write(to: &w)
            w.key("op"); w.string(Op.putJob.rawValue)
            w.endObject()
        default: w.raw(Array(try fallback.encode(self)))
        }
    }

    private static func write(_ op: Op, _ key: StaticString, to w: inout JSONWriter, record: (inout JSONWriter) -> Void) {
        w.beginObject()
        w.key("op"); w.string(op.rawValue)
        w.key(key); record(&w)
        w.endObject()
    }

    private static func write(_ op: Op, id: UUID, to w: inout JSONWriter) {
        w.beginObject()
        w.key("id"); w.uuid(id)
        w.key("op"); w.string(op.rawValue)
        w.endObject()
    }
}

extension UserRecord {
    /// The stored form, secrets included (``UserResponse`` is the public one).
    package func write(storedTo w: inout JSONWriter) {
        w.beginObject()
        if !appMetadata.isEmpty { w.key("app_metadata"); JSONValue.object(appMetadata).write(to: &w) }
        w.key("created_at"); w.double(createdAt.timeIntervalSince1970)
        if credentialVersion != 0 { w.key("credential_version"); w.int(credentialVersion) }
        if let disabledAt { w.key("disabled_at"); w.double(disabledAt.timeIntervalSince1970) }
        if let displayName { w.key("display_name"); w.string(displayName) }
        if let email { w.key("email"); w.string(email) }
        w.key("email_verified"); w.bool(emailVerified)
        if !groups.isEmpty { w.key("groups"); w.strings(groups) }
        w.key("id"); w.uuid(id)
        w.key("identities")
        w.beginArray()
        for identity in identities {
            w.beginObject()
            w.key("provider"); w.string(identity.provider)
            w.key("subject"); w.string(identity.subject)
            w.endObject()
        }
        w.endArray()
        w.key("is_anonymous"); w.bool(isAnonymous)
        if let locale { w.key("locale"); w.string(locale) }
        w.key("secrets"); JSONValue.object(secrets).write(to: &w)
        w.key("updated_at"); w.double(updatedAt.timeIntervalSince1970)
        if !userMetadata.isEmpty { w.key("user_metadata"); JSONValue.object(userMetadata).write(to: &w) }
        if let username { w.key("username"); w.string(username) }
        w.endObject()
    }
}

extension SessionRecord {
    /// Writes the stored form.
    package func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("amr"); w.strings(amr)
        if let authTime { w.key("auth_time"); w.double(authTime.timeIntervalSince1970) }
        if let clientGrant { w.key("client_grant"); w.string(clientGrant) }
        if let clientID { w.key("client_id"); w.string(clientID) }
        w.key("created_at"); w.double(createdAt.timeIntervalSince1970)
        if let deviceName { w.key("device_name"); w.string(deviceName) }
        w.key("expires_at"); w.double(expiresAt.timeIntervalSince1970)
        w.key("id"); w.uuid(id)
        if let keyPrefix { w.key("key_prefix"); w.string(keyPrefix) }
        if let kind { w.key("kind"); w.string(kind.rawValue) }
        w.key("last_used_at"); w.double(lastUsedAt.timeIntervalSince1970)
        if let network { w.key("network"); w.string(network) }
        if let platform { w.key("platform"); w.string(platform) }
        w.key("refresh_hashes"); w.strings(refreshHashes)
        w.key("retired")
        w.beginArray()
        for r in retired {
            w.beginObject()
            w.key("hash"); w.string(r.hash)
            w.key("retired_at"); w.double(r.retiredAt.timeIntervalSince1970)
            w.endObject()
        }
        w.endArray()
        w.key("user_id"); w.uuid(userID)
        w.endObject()
    }
}

extension SessionRotation {
    /// Writes the stored form.
    package func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("dropped"); w.int(dropped)
        w.key("expires_at"); w.double(expiresAt.timeIntervalSince1970)
        w.key("id"); w.uuid(id)
        w.key("last_used_at"); w.double(lastUsedAt.timeIntervalSince1970)
        w.key("refresh_hashes"); w.strings(refreshHashes)
        w.key("retired_at"); w.double(retiredAt.timeIntervalSince1970)
        w.endObject()
    }
}

extension JSONValue {
    /// Writes the value with object keys sorted; whole numbers as integers, as its `Codable` form does.
    package func write(to w: inout JSONWriter) {
        switch self {
        case .null: w.string(nil)
        case .bool(let b): w.bool(b)
        case .number(let n): w.double(n)
        case .string(let s): w.string(s)
        case .array(let a):
            w.beginArray()
            for v in a { v.write(to: &w) }
            w.endArray()
        case .object(let o):
            w.beginObject()
            for key in o.keys.sorted() {
                w.key(dynamic: key)
                o[key]!.write(to: &w)
            }
            w.endObject()
        }
    }
}

extension ApprovalRecord {
    /// Writes the stored form.
    package func write(to w: inout JSONWriter) {
        w.beginObject()
        if let approvedBy {
            w.key("approved_by")
            w.beginObject()
            w.key("amr"); w.strings(approvedBy.amr)
            w.key("auth_time"); w.double(approvedBy.authTime.timeIntervalSince1970)
            w.key("credential_version"); w.int(approvedBy.credentialVersion)
            w.key("session_id"); w.uuid(approvedBy.sessionID)
            w.endObject()
        }
        if let completeBy { w.key("complete_by"); w.double(completeBy.timeIntervalSince1970) }
        w.key("created_at"); w.double(createdAt.timeIntervalSince1970)
        if let deviceName { w.key("device_name"); w.string(deviceName) }
        w.key("expires_at"); w.double(expiresAt.timeIntervalSince1970)
        w.key("id"); w.string(id)
        w.key("kind"); w.string(kind)
        w.key("match_attempts"); w.int(matchAttempts)
        w.key("match_code_digest"); w.string(matchCodeDigest)
        if let network { w.key("network"); w.string(network) }
        w.key("payload"); JSONValue.object(payload).write(to: &w)
        if let platform { w.key("platform"); w.string(platform) }
        w.key("state"); w.string(state.rawValue)
        if let userID { w.key("user_id"); w.uuid(userID) }
        w.endObject()
    }
}

extension JobRecord {
    /// Writes the stored form.
    package func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("attempts"); w.int(attempts)
        w.key("created_at"); w.double(createdAt.timeIntervalSince1970)
        w.key("id"); w.uuid(id)
        w.key("kind"); w.string(kind)
        w.key("payload"); JSONValue.object(payload).write(to: &w)
        w.key("run_after"); w.double(runAfter.timeIntervalSince1970)
        w.endObject()
    }
}
