import Foundation
import Testing

/// The DocC catalog's Swift snippets stay true: every line of every ```swift block stands, as it is
/// (indentation aside), in a Swift source that compiles — authd's own or an example package's — so
/// a renamed method or a changed signature fails here instead of in a provider author's editor.
/// Lines that stand for code left out (`…`), comments and closing braces are not looked up.
struct GuideSnippetsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func swiftFiles(under folder: String) -> [URL] {
        let base = root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" && !$0.path.contains("/.build") }
    }

    static func snippets(in markdown: String) -> [[String]] {
        var blocks: [[String]] = [], current: [String]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if current == nil, line.trimmingCharacters(in: .whitespaces) == "```swift" { current = []; continue }
            if current != nil, line.trimmingCharacters(in: .whitespaces) == "```" { blocks.append(current!); current = nil; continue }
            current?.append(line)
        }
        return blocks
    }

    static func checked(_ line: String) -> String? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, !trimmed.hasPrefix("//"), !trimmed.contains("…"), !trimmed.allSatisfy({ "{}()[],".contains($0) }) else { return nil }
        return trimmed
    }

    @Test func everySnippetLineStandsInCodeThatCompiles() throws {
        let catalog = Self.root.appendingPathComponent("Sources/AuthKernel/AuthKernel.docc")
        let articles = try FileManager.default.contentsOfDirectory(at: catalog, includingPropertiesForKeys: nil).filter { $0.pathExtension == "md" }
        let sources = Set((Self.swiftFiles(under: "Sources") + Self.swiftFiles(under: "Examples")).flatMap { file in
            ((try? String(contentsOf: file, encoding: .utf8)) ?? "").split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        })
        var blocks = 0, missing: [String] = []
        for article in articles {
            for block in Self.snippets(in: try String(contentsOf: article, encoding: .utf8)) {
                blocks += 1
                missing += block.compactMap(Self.checked).filter { !sources.contains($0) }.map { "\(article.lastPathComponent): \($0)" }
            }
        }
        #expect(missing == [], "snippet lines in no compiled source")
        #expect(blocks >= 10, "the catalog's snippets were found")
    }
}
