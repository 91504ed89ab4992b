@testable import AuthKernel
import Foundation
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
        #expect(try parsed(fast) == parsed(StoreCoding.encoder().encode(line)))
    }

    @Test func otherLinesStillUseTheEncoder() throws {
        let line = JournalLine(seq: 1, changes: [.putUser(UserRecord(createdAt: Date(timeIntervalSince1970: 0)))])
        #expect(try line.encoded(with: StoreCoding.encoder()) == Array(StoreCoding.encoder().encode(line)))
    }
}
