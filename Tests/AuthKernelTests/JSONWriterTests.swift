@testable import FileStore
@testable import AuthStorage
@testable import AuthKernel
import AuthKernelTesting
import Foundation
import HTTPTypes
import Synchronization
import Testing

/// The hand-written JSON of the hot paths must read back exactly as the `Codable` forms do.
struct JSONWriterTests {
    let awkward = ["plain", "quote \" and backslash \\", "new\nline\ttab\r", "nul \u{0} bell \u{7} del \u{7F}", "Zoë 🦊 李", "</script>"]

    func parsed(_ bytes: some Sequence<UInt8>) throws -> NSDictionary {
        try #require(JSONSerialization.jsonObject(with: Data(bytes)) as? NSDictionary)
    }

    @Test func userAndSessionAnswersEqualTheirCodableForm() throws {
        for (i, text) in awkward.enumerated() {
            var user = UserRecord(email: "a\(i)@example.com", emailVerified: i % 2 == 0, createdAt: Date(timeIntervalSince1970: 1_800_000_000.25))
            user.displayName = text
            user.username = i % 3 == 0 ? nil : text
            user.identities = [Identity(provider: "email", subject: "x"), Identity(provider: text, subject: "y")]
            let response = UserResponse(user)
            var w = JSONWriter()
            response.write(to: &w)
            #expect(try parsed(w.bytes) == parsed(JSONEncoder().encode(response)))
            #expect(try JSONDecoder().decode(UserResponse.self, from: Data(w.bytes)) == response)
        }
    }

    /// The error shape as `JSONEncoder` wrote it before errors were written by hand.
    struct EncodedError: Encodable {
        struct Inner: Encodable { var code: String; var message: String; var details: [String: JSONValue]? }
        var error: Inner
    }

    @Test func errorBodiesEqualTheEncoderForm() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        func encoded(_ error: AuthError) throws -> [UInt8] {
            Array(try encoder.encode(EncodedError(error: .init(code: error.code, message: error.message, details: error.details))))
        }
        // Plain errors: the same bytes as before.
        let plain: [AuthError] = [.unauthorized, .invalidRequest("Missing field.", field: "email"), .rateLimited(retryAfter: 17), AuthError(status: .badRequest, code: "WEAK_PASSWORD", message: "Too short.", details: ["reason": .string("too_short")])]
        for error in plain { #expect(try error.body == encoded(error), "\(error.code)") }
        // Any details and awkward strings: the same JSON.
        var errors = plain
        errors.append(AuthError(status: .badRequest, code: "X", message: "nested", details: [
            "b": .array([.number(1.5), .number(-3), .bool(true), .null, .string("a/b")]), "a": .object(["z": .number(1e20), "y": .string("Zoë 🦊")]),
            "c": .number(.infinity),
        ]))
        for text in awkward { errors.append(AuthError(status: .conflict, code: "INVALID_STATE", message: text, details: ["field": .string(text)])) }
        for error in errors {
            #expect(try parsed(error.body) == parsed(encoded(error)), "\(error.code): \(error.message)")
        }
    }

    @Test func sessionJournalLinesReadBackAsTheyWereWritten() throws {
        var changes: [StoreChange] = []
        for (i, text) in awkward.enumerated() {
            var s = SessionRecord(
                userID: UUID(), deviceName: i % 2 == 0 ? text : nil, platform: i % 3 == 0 ? nil : text, amr: ["email", text],
                createdAt: Date(timeIntervalSince1970: 1_800_000_000.123456), expiresAt: Date(timeIntervalSince1970: 1_802_592_000),
                refreshHash: "h\(i)"
            )
            s.lastUsedAt = Date(timeIntervalSince1970: 1_800_000_123.987654321)
            s.retired = [RetiredRefreshToken(hash: "old\(i)", retiredAt: Date(timeIntervalSince1970: 1_800_000_100.5))]
            changes.append(.putSession(s))
            changes.append(.deleteSession(UUID()))
        }
        let line = JournalLine(seq: 123_456_789, changes: changes)
        let fast = try line.encoded(with: StoreCoding.encoder())
        let decoded = try StoreCoding.decoder().decode(JournalLine.self, from: Data(fast))
        #expect(decoded.seq == line.seq)
        #expect(decoded.changes == line.changes)
        let replayed = fast.withUnsafeBufferPointer { JournalLine.fastDecode($0) }
        #expect(replayed?.seq == line.seq && replayed?.changes == line.changes)
        #expect(try parsed(fast) == parsed(StoreCoding.encoder().encode(line)))
    }

    /// Users with every optional set or absent, awkward text and nested secrets.
    func awkwardUsers() -> [UserRecord] {
        awkward.enumerated().map { i, text in
            var u = UserRecord(
                email: i % 2 == 0 ? "a\(i)@example.com" : nil, emailVerified: i % 2 == 0, displayName: i % 3 == 0 ? nil : text,
                username: i % 2 == 1 ? text : nil, isAnonymous: i == 1, identities: [Identity(provider: "email", subject: text)],
                createdAt: Date(timeIntervalSince1970: 1_800_000_000.123456), updatedAt: Date(timeIntervalSince1970: 1_800_000_001.5)
            )
            u.secrets = [
                "pin": .object(["hash": .string("$argon2id$v=19$m=19456,t=2,p=1$" + text), "failures": .number(Double(i)), "locked": .bool(i > 2)]),
                text: .array([.null, .number(0.1), .number(-3), .string(text), .object([:])]),
            ]
            if i == 3 { u.disabledAt = Date(timeIntervalSince1970: 1_800_000_500.25) }
            return u
        }
    }

    @Test func userJournalLinesReadBackAsTheyWereWritten() throws {
        var changes: [StoreChange] = awkwardUsers().map { .putUser($0) }
        changes.append(.deleteUser(UUID()))
        let line = JournalLine(seq: 42, changes: changes)
        let fast = try line.encoded(with: StoreCoding.encoder())
        let decoded = try StoreCoding.decoder().decode(JournalLine.self, from: Data(fast))
        #expect(decoded.changes == line.changes)
        #expect(try parsed(fast) == parsed(StoreCoding.encoder().encode(line)))
        // Start-up's own readers agree too: the journal line's and the snapshot record's.
        let replayed = fast.withUnsafeBufferPointer { JournalLine.fastDecode($0) }
        #expect(replayed?.seq == 42 && replayed?.changes == line.changes)
        for change in changes.dropLast() {
            var w = JSONWriter()
            try change.write(to: &w, fallback: StoreCoding.encoder())
            #expect(w.bytes.withUnsafeBufferPointer { StoreChange.fastDecode($0) } == change)
        }
    }

    @Test func otherRecordsGoThroughTheEncoderInsideTheSameLine() throws {
        let code = CodeRecord(
            purpose: "email_sign_in", key: "a@example.com", digest: "ab", sentAt: Date(timeIntervalSince1970: 1_800_000_000),
            expiresAt: Date(timeIntervalSince1970: 1_800_000_600), failures: [Date(timeIntervalSince1970: 1_800_000_001)],
            payload: ["name": .string("Zoë")]
        )
        let line = JournalLine(seq: 7, changes: [.putUser(awkwardUsers()[0]), .putCode(code), .deleteCode(code.id)])
        let fast = try line.encoded(with: StoreCoding.encoder())
        #expect(try StoreCoding.decoder().decode(JournalLine.self, from: Data(fast)).changes == line.changes)
        // A line with records the hand-written reader does not know is left to JSONDecoder whole.
        #expect(fast.withUnsafeBufferPointer { JournalLine.fastDecode($0) } == nil)
        #expect(try parsed(fast) == parsed(StoreCoding.encoder().encode(line)))
    }

    @Test func approvalAndJobLinesAreWrittenByHandAsTheEncoderWritesThem() throws {
        let t = Date(timeIntervalSince1970: 1_800_000_000.5)
        var approved = ApprovalRecord(
            id: "req-1", kind: "sign_in", userID: UUID(), matchCodeDigest: "ab", matchAttempts: 1, state: .approved, createdAt: t,
            expiresAt: t.addingTimeInterval(120), completeBy: t.addingTimeInterval(240), deviceName: "Zoë's \"laptop\"", payload: ["request_token": .string("x")],
            platform: "macos", network: "203.0.113.0/24")
        approved.approvedBy = .init(sessionID: UUID(), authTime: t.addingTimeInterval(-30), amr: ["email", "mfa"], credentialVersion: 3)
        let decoy = ApprovalRecord(
            id: "req-2", kind: "sign_in", userID: nil, matchCodeDigest: "cd", matchAttempts: 0, state: .pending, createdAt: t, expiresAt: t,
            completeBy: nil, deviceName: nil, payload: [:])
        let job = JobRecord(id: UUID(), kind: "approval.deliver", payload: ["approval_id": .string("req-1"), "n": .number(2)], attempts: 0, runAfter: t, createdAt: t)
        let line = JournalLine(seq: 3, changes: [.putApproval(approved), .putApproval(decoy), .putJob(job), .deleteJob(job.id)])
        let fast = try line.encoded(with: StoreCoding.encoder())
        #expect(try parsed(fast) == parsed(StoreCoding.encoder().encode(line)))
        #expect(try StoreCoding.decoder().decode(JournalLine.self, from: Data(fast)).changes == line.changes)
    }

    @Test func numbersJSONCannotHoldAreWrittenAsNull() throws {
        var w = JSONWriter(capacity: 64)
        w.beginArray()
        for n in [Double.infinity, -.infinity, .nan, 2, 0.5] { w.double(n) }
        w.endArray()
        #expect(String(decoding: w.bytes, as: UTF8.self) == "[null,null,null,2,0.5]")
        let encoded = try JSONEncoder().encode(JSONValue.array([.number(.nan), .number(.infinity), .number(3)]))
        #expect(String(decoding: encoded, as: UTF8.self) == "[null,null,3]")
    }

    @Test func snapshotsOfHandWrittenRecordsReadBack() throws {
        var state = StoreState()
        for u in awkwardUsers() { state.put(u) }
        let bytes = try SnapshotFile.encode(state, seq: 9)
        let (seq, changes) = try SnapshotFile.decode(bytes, path: "snapshot.json")
        #expect(seq == 9)
        let users = changes.compactMap { if case .putUser(let u) = $0 { u } else { nil } }
        for u in users { #expect(state.users[u.id] == u) }
        #expect(users.count == state.users.count)
    }

    @Test func aSnapshotEncodedInTheBackgroundHoldsTheSameRecords() throws {
        let state = sampleState()
        let parallel = try SnapshotFile.encode(state, seq: 4)
        let background = try SnapshotFile.encode(state, seq: 4, inBackground: true)
        #expect(parallel.count == background.count)
        for bytes in [parallel, background] {
            let (seq, changes) = try SnapshotFile.decode(bytes, path: "snapshot.json")
            #expect(seq == 4 && changes.count == 3000 + 1000 + 1)
            var decoded = StoreState()
            for change in changes { decoded.apply(change) }
            #expect(decoded.users == state.users && decoded.sessions == state.sessions && decoded.codes == state.codes)
        }
    }

    @Test func aSnapshotWrittenPartByPartHoldsTheSameRecords() throws {
        let state = sampleState()
        for inBackground in [false, true] {
            let written = Mutex<[[UInt8]]>([])
            try SnapshotFile.write(state, seq: 4, inBackground: inBackground) { bytes in written.withLock { $0.append(bytes) } }
            let chunks = written.withLock { $0 }
            // Handed over part by part, never as one buffer.
            #expect(chunks.count > 2 && chunks.allSatisfy { $0.count < chunks.reduce(0) { $0 + $1.count } / 2 })
            let (seq, changes) = try SnapshotFile.decode(chunks.flatMap { $0 }, path: "snapshot.json")
            #expect(seq == 4 && changes.count == 3000 + 1000 + 1)
            var decoded = StoreState()
            for change in changes { decoded.apply(change) }
            #expect(decoded.users == state.users && decoded.sessions == state.sessions && decoded.codes == state.codes)
        }
    }

    @Test func aSnapshotWhoseWriteFailsLeavesTheOldFileAndNoTemporary() throws {
        struct DiskFull: Error {}
        let state = sampleState()
        let folder = temporaryFolder()
        let path = folder + "/snapshot.json"
        try DurableFile.replace(path, with: Array("old".utf8))
        for inBackground in [false, true] {
            let calls = Mutex(0)
            #expect(throws: DiskFull.self) {
                try DurableFile.replace(path) { write in
                    try SnapshotFile.write(state, seq: 4, inBackground: inBackground) { bytes in
                        guard calls.withLock({ $0 += 1; return $0 }) < 3 else { throw DiskFull() }
                        try write(bytes)
                    }
                }
            }
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
            #expect(!FileManager.default.fileExists(atPath: path + ".tmp"))
        }
    }

    func sampleState() -> StoreState {
        var state = StoreState()
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        for i in 0..<3000 {
            let u = UserRecord(email: "u\(i)@example.com", createdAt: t)
            state.put(u)
            if i % 3 == 0 { state.put(SessionRecord(userID: u.id, deviceName: nil, platform: nil, amr: ["otp"], createdAt: t, expiresAt: t + 60, refreshHash: "h\(i)")) }
        }
        state.put(CodeRecord(purpose: "email_sign_in", key: "u1@example.com", digest: "d", sentAt: t, expiresAt: t + 600))
        return state
    }
}
