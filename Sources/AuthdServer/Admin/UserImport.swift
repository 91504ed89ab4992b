import AuthKernel
import AuthdCore
import AuthStorage
import Foundation
import PINProvider
import PasswordProvider

/// `authd import-users FILE` (contract §11): users from another system, one JSON object per line.
/// A line whose email, id or identity exists is skipped and reported; a line that cannot be
/// imported is reported with its reason; nothing is mailed. Users are written in batches, each one
/// store write (one fsync).
struct UserImport {
    let store: any AuthStore
    let clock: any AuthClock

    static let batch = 500
    static let maxLineBytes = 64 * 1024
    static let fields: Set<String> = [
        "id", "email", "email_verified", "display_name", "created_at", "password_hash", "pin_hash", "identities", "app_metadata", "user_metadata",
    ]

    /// Counts, and the first lines of each kind with their reasons: a file of a million bad lines
    /// must not become a million strings in the server's memory.
    struct Report {
        static let listed = 50
        var imported = 0
        var lines = 0
        private(set) var skipped = 0
        private(set) var refused = 0
        private var examples: [(kind: String, text: String)] = []

        mutating func skip(_ text: String) {
            skipped += 1
            if skipped <= Self.listed { examples.append(("skipped", text)) }
        }

        mutating func refuse(_ text: String) {
            refused += 1
            if refused <= Self.listed { examples.append(("refused", text)) }
        }

        func text(dryRun: Bool) -> String {
            var out = "\(lines) line\(lines == 1 ? "" : "s"): \(imported) user\(imported == 1 ? "" : "s") \(dryRun ? "would be imported" : "imported"), "
            out += "\(skipped) skipped (already there), \(refused) refused\n"
            for (kind, count) in [("skipped", skipped), ("refused", refused)] where count > 0 {
                for example in examples where example.kind == kind { out += "  \(kind): \(example.text)\n" }
                if count > Self.listed { out += "  … and \(count - Self.listed) more \(kind)\n" }
            }
            return out
        }
    }

    /// - Parameter progress: told the lines done and the part of the file read after each batch.
    func run(path: String, dryRun: Bool, progress: AdminProgressSink = { _ in }) async throws -> Report {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw AdminError("cannot read \(path)") }
        defer { try? handle.close() }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        let phase = dryRun ? "checking users" : "importing users"
        var bytesRead = 0
        var report = Report()
        var pending: [(line: Int, user: UserRecord)] = []
        var buffer = Data()
        var lineNumber = 0
        let now = clock.now()

        func take(_ line: Data) {
            lineNumber += 1
            guard !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) else { return }
            report.lines += 1
            do {
                pending.append((lineNumber, try Self.user(from: line, now: now)))
            } catch {
                report.refuse("line \(lineNumber): \(error)")
            }
        }
        func flush() async throws {
            guard !pending.isEmpty else { return }
            let outcome = try await write(pending, dryRun: dryRun)
            report.imported += outcome.imported
            for text in outcome.skipped { report.skip(text) }
            pending.removeAll(keepingCapacity: true)
            let consumed = bytesRead - buffer.count
            progress(AdminProgress(phase: phase, done: report.lines, unit: "lines", fraction: size.map { $0 > 0 ? min(1, Double(consumed) / Double($0)) : 1 }))
        }

        progress(AdminProgress(phase: phase, done: 0, unit: "lines", fraction: 0))
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            bytesRead += chunk.count
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: 0x0A) {
                take(buffer[buffer.startIndex..<newline])
                buffer.removeSubrange(buffer.startIndex...newline)
                if pending.count >= Self.batch { try await flush() }
            }
            if buffer.count > Self.maxLineBytes {
                lineNumber += 1
                report.lines += 1
                report.refuse("line \(lineNumber): longer than \(Self.maxLineBytes) bytes")
                throw AdminError(report.text(dryRun: dryRun) + "stopped: a line over \(Self.maxLineBytes) bytes (is this a JSON-lines file?)")
            }
        }
        if !buffer.isEmpty { take(buffer) }
        buffer.removeAll()
        try await flush()
        progress(AdminProgress(phase: phase, done: report.lines, unit: "lines", fraction: 1))
        return report
    }

    /// Stores the users that do not clash with existing ones (or, dry, only checks), and lists the
    /// password hash schemes they bring for the password provider to measure (contract §17).
    private func write(_ users: [(line: Int, user: UserRecord)], dryRun: Bool) async throws -> (imported: Int, skipped: [String]) {
        let schemes = Set(users.compactMap { _, user -> String? in
            guard case .object(let credential)? = user.secrets[PasswordProvider.id], case .string(let stored)? = credential["hash"],
                stored.hasPrefix("import$")
            else { return nil }
            return PasswordProvider.standIn(for: String(stored.dropFirst(7)))
        })
        let (purpose, key) = PasswordProvider.importedSchemes, now = clock.now()
        var keys: [StoreKey] = [.code(purpose: purpose, key: key)]
        for (_, user) in users {
            keys.append(.user(user.id))
            if let email = user.email { keys.append(.userByEmail(email)) }
            keys += user.identities.map { .userByIdentity($0) }
        }
        let body: @Sendable (inout StoreState) -> (Int, [String]) = { state in
            var imported = 0, skipped: [String] = []
            var seen = Set<String>()
            for (line, user) in users {
                let email = user.email ?? ""
                if state.user(id: user.id) != nil { skipped.append("line \(line): id \(user.id.lowercased) exists"); continue }
                if state.user(email: email) != nil || !seen.insert("e:" + email).inserted { skipped.append("line \(line): \(email) exists"); continue }
                if let taken = user.identities.first(where: { state.user(identity: $0) != nil || !seen.insert("i:\($0.provider):\($0.subject)").inserted }) {
                    skipped.append("line \(line): the \(taken.provider) identity is another user's")
                    continue
                }
                if !dryRun { state.put(user) }
                imported += 1
            }
            if !dryRun, imported > 0, !schemes.isEmpty {
                var listed = Set<String>()
                if case .array(let items)? = state.code(purpose: purpose, key: key)?.payload?["hashes"] {
                    for case .string(let s) in items { listed.insert(s) }
                }
                if !schemes.isSubset(of: listed) {
                    state.put(CodeRecord(
                        purpose: purpose, key: key, digest: "", sentAt: now, expiresAt: now.addingTimeInterval(100 * 365 * 86_400),
                        payload: ["hashes": .array(listed.union(schemes).sorted().map { .string($0) })]))
                }
            }
            return (imported, skipped)
        }
        if dryRun {
            return try await store.read(keys) { state in var copy = state; return body(&copy) }
        }
        return try await store.write(keys) { state in body(&state) }
    }

    struct LineError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The user a line describes.
    static func user(from line: Data, now: Date) throws -> UserRecord {
        guard line.count <= maxLineBytes else { throw LineError("longer than \(maxLineBytes) bytes") }
        guard case .object(let o)? = try? JSONDecoder().decode(JSONValue.self, from: line) else { throw LineError("not a JSON object") }
        if let unknown = Set(o.keys).subtracting(fields).sorted().first { throw LineError("unknown field \(LogSafe.text(unknown, maxLength: 40))") }
        func string(_ key: String) throws -> String? {
            switch o[key] {
            case nil, .null?: return nil
            case .string(let s)?: return s
            default: throw LineError("\(key) must be a string")
            }
        }
        let pinHash = try string("pin_hash")
        var address: String?
        if let rawEmail = try string("email") {
            guard let parsed = EmailAddress(rawEmail) else { throw LineError("email is not a valid address") }
            address = parsed.value
        }
        var user = UserRecord(email: address, createdAt: now)
        if let id = try string("id") {
            guard let uuid = UUID(uuidString: id) else { throw LineError("id is not a UUID") }
            user.id = uuid
        }
        // A user with no email signs in with the PIN and its id (`pin/verify` with `user_id`): both needed.
        guard address != nil || (pinHash != nil && o["id"] != nil) else { throw LineError("email is missing (a user without one needs id and pin_hash)") }
        user.isAnonymous = address == nil
        switch o["email_verified"] {
        case nil, .null?: break
        case .bool(let b)?: user.emailVerified = b
        default: throw LineError("email_verified must be true or false")
        }
        let displayName = try string("display_name")
        do { user.displayName = try DisplayName.validate(displayName) } catch { throw LineError(error.message) }
        switch o["created_at"] {
        case nil, .null?: break
        case .number(let n)?: user.createdAt = Date(timeIntervalSince1970: n)
        case .string(let s)?:
            guard let date = Self.date(s) else { throw LineError("created_at is not an RFC 3339 time") }
            user.createdAt = date
        default: throw LineError("created_at must be an RFC 3339 time or Unix seconds")
        }
        user.updatedAt = now
        if let pinHash {
            // The format PINCredential reads as legacy: hex SHA-256 of the salt followed by the PIN,
            // re-hashed with authd's keyed hash at the first right PIN.
            let parts = pinHash.split(separator: "$", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == "sha256", (1...128).contains(parts[1].utf8.count), parts[2].utf8.count == 64,
                Hex.decode(String(parts[2])) != nil
            else { throw LineError("pin_hash must be sha256$SALT$HEX: the hex SHA-256 of the salt followed by the PIN") }
            try user.setSecret(PINProvider.id, PINCredential(legacySalt: String(parts[1]), hash: String(parts[2])))
            user.identities.append(Identity(provider: PINProvider.id, subject: user.id.lowercased))
        }
        if let hash = try string("password_hash") {
            guard let address else { throw LineError("password_hash needs an email") }
            switch ImportedPasswordHash.format(of: hash) {
            case .failure(let why): throw LineError("password_hash: \(why)")
            case .success: break
            }
            user.identities.append(Identity(provider: PasswordProvider.id, subject: address))
            user.secrets[PasswordProvider.id] = try PasswordProvider.importedCredential(hash: hash, changedAt: user.createdAt.timeIntervalSince1970)
        }
        switch o["identities"] {
        case nil, .null?: break
        case .array(let items)?:
            for item in items {
                guard case .object(let i) = item, case .string(let provider)? = i["provider"], case .string(let subject)? = i["subject"],
                    (1...64).contains(provider.utf8.count), (1...255).contains(subject.utf8.count), provider != PasswordProvider.id
                else { throw LineError("identities must be [{\"provider\",\"subject\"}] (provider 1-64 bytes, subject 1-255, not password)") }
                user.identities.append(Identity(provider: provider, subject: subject))
            }
        default: throw LineError("identities must be an array")
        }
        do {
            if let value = o["user_metadata"] { user.userMetadata = try UserMetadata.validate(value, field: "user_metadata", maxBytes: UserMetadata.maxUserBytes) }
            if let value = o["app_metadata"] { user.appMetadata = try UserMetadata.validate(value, field: "app_metadata", maxBytes: UserMetadata.maxAppBytes) }
        } catch {
            throw LineError(error.message)
        }
        return user
    }

    static func date(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        if let date = plain.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = fractional.date(from: text) { return date }
        // Supabase and PostgreSQL write `2024-05-01 10:00:00.123456+00`.
        let normalised = text.replacingOccurrences(of: " ", with: "T")
        let withZone = normalised.range(of: #"[+-]\d\d$"#, options: .regularExpression) != nil ? normalised + ":00" : normalised
        return plain.date(from: withZone) ?? fractional.date(from: withZone) ?? Self.trimmedFraction(withZone).flatMap { fractional.date(from: $0) }
    }

    /// ISO8601DateFormatter reads at most three fractional digits: PostgreSQL writes six.
    private static func trimmedFraction(_ text: String) -> String? {
        guard let dot = text.firstIndex(of: ".") else { return nil }
        let digits = text[text.index(after: dot)...].prefix { $0.isNumber }
        guard digits.count > 3 else { return nil }
        return String(text[...dot]) + digits.prefix(3) + text[text.index(dot, offsetBy: digits.count + 1)...]
    }
}
