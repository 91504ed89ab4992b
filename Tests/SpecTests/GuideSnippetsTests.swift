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
        let sources = Set((Self.swiftFiles(under: "Sources") + Self.swiftFiles(under: "Examples") + Self.swiftFiles(under: "Tests")).flatMap { file in
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

    /// The ```swift examples in the doc comments of the SDK and the test kit, line by line.
    static func docCommentSnippets(in source: String) -> [[String]] {
        var blocks: [[String]] = [], current: [String]?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("///") else { current = nil; continue }
            var body = trimmed.dropFirst(3)
            if body.hasPrefix(" ") { body = body.dropFirst() }
            if current == nil, body.trimmingCharacters(in: .whitespaces) == "```swift" { current = []; continue }
            if current != nil, body.trimmingCharacters(in: .whitespaces) == "```" { blocks.append(current!); current = nil; continue }
            current?.append(String(body))
        }
        return blocks
    }

    /// Every line of a doc comment's example stands in compiled code (comments aside): the SDK's own,
    /// an example package's or a test's (Tests/AuthKernelTests/DocCommentExampleTests.swift runs the
    /// ones nothing else does).
    @Test func everyDocCommentExampleLineStandsInCodeThatCompiles() throws {
        let compiled = Set((Self.swiftFiles(under: "Sources") + Self.swiftFiles(under: "Examples") + Self.swiftFiles(under: "Tests")).flatMap { file in
            ((try? String(contentsOf: file, encoding: .utf8)) ?? "").split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.hasPrefix("//") }
        })
        var blocks = 0, missing: [String] = []
        for file in Self.swiftFiles(under: "Sources/AuthKernel") + Self.swiftFiles(under: "Sources/AuthKernelTesting") {
            for block in Self.docCommentSnippets(in: try String(contentsOf: file, encoding: .utf8)) {
                blocks += 1
                missing += block.compactMap(Self.checked).filter { !$0.contains("...") && !compiled.contains($0) }.map { "\(file.lastPathComponent): \($0)" }
            }
        }
        #expect(missing == [], "doc comment example lines in no compiled code")
        #expect(blocks >= 10, "the doc comments' examples were found")
    }
}
