@testable import AuthStorage
@testable import AuthKernel
import Foundation
import Testing

/// The start-up fast path must read every user and session exactly as `JSONDecoder` does, and step
/// aside (nil) for anything else.
struct JSONReaderTests {
    let awkward = ["plain", "quote \" and backslash \\ and slash /", "new\nline\ttab\r", "nul \u{0} bell \u{7} del \u{7F}", "Zoë 🦊 李 \u{10FFFF}", ""]

    func fast(_ data: Data) -> StoreChange? {
        Array(data).withUnsafeBufferPointer { StoreChange.fastDecode($0) }
    }

    @Test func usersAndSessionsReadBackExactly() throws {
        for (i, text) in awkward.enumerated() {
            var user = UserRecord(
                email: i % 2 == 0 ? "u\(i)@example.com" : nil, emailVerified: i % 2 == 0, displayName: text, username: i % 3 == 0 ? nil : text,
                isAnonymous: i == 5, identities: [Identity(provider: "email", subject: text)],
                secrets: ["pin": .object(["hash": .string(text), "failures": .number(3), "locked_until": .number(1_800_000_000.5), "legacy": .null,
                                          "flags": .array([.bool(true), .bool(false), .number(-1e-7)])])],
                createdAt: Date(timeIntervalSince1970: 1_800_000_000.123456)
            )
            user.updatedAt = Date(timeIntervalSince1970: 1_800_000_999.987654321)
            user.disabledAt = i == 4 ? Date(timeIntervalSince1970: 1_800_001_000) : nil
            user.locale = i % 2 == 0 ? "de-AT" : nil
            var session = SessionRecord(
                userID: user.id, deviceName: i % 2 == 0 ? text : nil, platform: text, amr: ["email"], createdAt: user.createdAt,
                expiresAt: Date(timeIntervalSince1970: 1_802_592_000), refreshHash: "h\(i)"
            )
            session.retired = [RetiredRefreshToken(hash: "r\(i)", retiredAt: Date(timeIntervalSince1970: 1_800_000_001.25))]
            for change in [StoreChange.putUser(user), .putSession(session)] {
                let encoded = try StoreCoding.encoder().encode(change)
                #expect(fast(encoded) == change)
                #expect(try StoreCoding.decoder().decode(StoreChange.self, from: encoded) == change)
            }
            // Escapes JSONEncoder does not write, as another writer might.
            let escaped = #"{"op":"put_user","user":{"id":"\#(user.id.uuidString)","email_verified":true,"is_anonymous":false,"identities":[],"secrets":{},"display_name":"\u00e9\ud83e\udd8a\/","created_at":1,"updated_at":2}}"#
            guard case .putUser(let read)? = fast(Data(escaped.utf8)) else { Issue.record("escapes refused"); continue }
            #expect(read.displayName == "é🦊/")
        }
    }

    @Test func deletionsOfUsersAndSessionsAreReadToo() throws {
        let id = UUID()
        #expect(fast(Data(#"{"id":"\#(id.uuidString)","op":"delete_user"}"#.utf8)) == .deleteUser(id))
        #expect(fast(Data(#"{"op":"delete_session","id":"\#(id.uuidString.lowercased())"}"#.utf8)) == .deleteSession(id))
    }

    @Test func anythingElseStepsAside() {
        let id = UUID().uuidString
        for text in [
            #"{"op":"put_code","code":{}}"#,
            #"{"op":"delete_code","id":"email_sign_in:a@example.com"}"#,
            #"{"op":"delete_user","id":"not-a-uuid"}"#,
            #"{"op":"delete_user"}"#,
            #"{"op":"put_user","user":{"id":"\#(id)"}}"#,  // fields missing
            #"{"op":"put_user","user":{"id":"\#(id)","email_verified":true,"is_anonymous":false,"identities":[],"secrets":{},"created_at":1,"updated_at":2,"extra":1}}"#,
            #"{"op":"put_user","user":{"id":"not-a-uuid","email_verified":true,"is_anonymous":false,"identities":[],"secrets":{},"created_at":1,"updated_at":2}}"#,
            #"{"op":"put_user","user":{"id":"\#(id)","email_verified":true,"is_anonymous":false,"identities":[],"secrets":{},"created_at":1,"updated_at":2}} trailing"#,
            #"{"op":"put_user","user":{"id":"\#(id)","email":"bad \ud800 surrogate","email_verified":true,"is_anonymous":false,"identities":[],"secrets":{},"created_at":1,"updated_at":2}}"#,
            #"{"op":"put_user","user":{"id":"\#(id)","email_verified":tru"#,
            "",
        ] {
            #expect(fast(Data(text.utf8)) == nil, "\(text)")
        }
    }
}
