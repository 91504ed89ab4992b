import AuthStorage
package import Foundation

/// Writes a ``MailMessage`` as an RFC 5322 message: `Date`, `Message-ID`, `From`, `To`, `Subject`
/// (RFC 2047 encoded when not ASCII), MIME multipart/alternative with a text and an HTML part,
/// each UTF-8 and base64. Lines end in CRLF and stay under 78 characters.
package enum MailComposer {
    /// The whole message.
    /// - Throws: ``MailError/headerInjection(field:)`` when `from` or the recipient holds control characters.
    package static func compose(_ message: MailMessage, from: String, date: Date = Date()) throws(MailError) -> String {
        let sender = try MailAddress(parsing: from, field: "From")
        let recipient = try MailAddress(parsing: message.to, field: "To")
        guard !message.subject.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .headerInjection(field: "Subject")
        }
        let boundary = "authd-" + Hex.encode(SecureRandom.bytes(12))
        var lines = [
            "Date: " + rfc5322Date(date),
            "Message-ID: <\(Hex.encode(SecureRandom.bytes(16)))@\(sender.domain)>",
            "From: " + mailbox(sender),
            "To: " + mailbox(recipient),
            "Subject: " + encodedWords(message.subject),
            "MIME-Version: 1.0",
        ]
        if let language = message.language.flatMap({ LanguageTag($0) }) { lines.append("Content-Language: \(language)") }
        lines += [
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
            "--\(boundary)",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
        ]
        lines += base64Lines(message.text)
        let html = message.html ?? "<p>" + escapeHTML(message.text).replacingOccurrences(of: "\n", with: "<br>") + "</p>"
        lines += ["", "--\(boundary)", "Content-Type: text/html; charset=utf-8", "Content-Transfer-Encoding: base64", ""]
        lines += base64Lines(html)
        lines += ["", "--\(boundary)--", ""]
        return lines.joined(separator: "\r\n")
    }

    static func mailbox(_ m: MailAddress) -> String {
        guard let name = m.name else { return m.address }
        let plain = name.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 && !"\"\\".unicodeScalars.contains($0) }
        return (plain ? "\"\(name)\"" : encodedWords(name)) + " <\(m.address)>"
    }

    /// RFC 2047 `=?UTF-8?B?…?=` words for non-ASCII text, each under 76 characters, never splitting a character.
    static func encodedWords(_ text: String) -> String {
        if text.unicodeScalars.allSatisfy({ $0.isASCII }) { return text }
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in text {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 45 {
                words.append("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=")
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty { words.append("=?UTF-8?B?" + Data(chunk).base64EncodedString() + "?=") }
        return words.joined(separator: "\r\n ")
    }

    static func base64Lines(_ text: String) -> [String] {
        let encoded = Data(text.utf8).base64EncodedString()
        return stride(from: 0, to: encoded.count, by: 76).map {
            let start = encoded.index(encoded.startIndex, offsetBy: $0)
            return String(encoded[start..<(encoded.index(start, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex)])
        }
    }

    static func rfc5322Date(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return f.string(from: date)
    }

    /// Escapes text for HTML.
    package static func escapeHTML(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
