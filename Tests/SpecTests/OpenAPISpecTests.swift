import AuthdServer
import AppleProvider
import AuthKernel
import AuthTestSupport
import EmailProvider
import Foundation
import PINProvider
import PasswordProvider
import Testing

/// docs/openapi.yaml and the server agree: every route is in the spec and every operation is served.
struct OpenAPISpecTests {
    static let specPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/openapi.yaml").path

    /// `METHOD /path` for every operation, read from the spec's `paths` (two-space path keys, four-space methods).
    static func specOperations(_ yaml: String) -> [String] {
        var operations: [String] = []
        var path: String?
        var inPaths = false
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            if inPaths, let first = line.first, first != " " { break }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), !line.hasPrefix("   ") { path = String(line.dropFirst(2).dropLast()) }
            for method in ["get", "post", "put", "patch", "delete"] where line == "    \(method):" {
                operations.append("\(method.uppercased()) \(path ?? "?")")
            }
        }
        return operations.sorted()
    }

    @Test func everyRouteIsInTheSpecAndTheReverse() async throws {
        let yaml = try String(contentsOfFile: Self.specPath, encoding: .utf8)
        let h = try await TestHarness.make(
            providers: [EmailProvider.self, PINProvider.self, PasswordProvider.self, AppleProvider.self],
            config: #"{"providers":["email","pin","password","apple"],"apple":{"audiences":["com.example.app"],"jwks_url":"http://127.0.0.1:1/keys"}}"#
        )
        let served = h.server.routes
        await h.server.close()
        let specified = Self.specOperations(yaml)
        #expect(specified.count > 30)
        #expect(Set(served).subtracting(specified).sorted() == [], "served but not in docs/openapi.yaml")
        #expect(Set(specified).subtracting(served).sorted() == [], "in docs/openapi.yaml but not served")
    }

    @Test func theServedDocumentIsTheSpec() async throws {
        let yaml = try String(contentsOfFile: Self.specPath, encoding: .utf8)
        #expect(OpenAPIDocument.yaml + "\n" == yaml, "run scripts/embed-openapi after editing docs/openapi.yaml")
        let h = try await TestHarness.make()
        try await h.test { client async throws in
            let r = try await client.execute(uri: "/openapi.yaml", method: .get)
            #expect(r.status == .ok)
            #expect(String(buffer: r.body) == OpenAPIDocument.yaml)
        }
    }
}

import HTTPTypes
import HummingbirdTesting
import NIOCore
