import AnonymousProvider
import AppleProvider
import AuthKernel
import AuthKernelTesting
@testable import AuthdCore
import AuthdServer
import EmailProvider
import Foundation
import PINProvider
import PasswordProvider
import Synchronization
import Testing

/// The served OpenAPI document and the server agree: every route is in it and every operation it
/// lists is served, for any set of providers; docs/openapi.yaml is the document for all built-ins.
struct OpenAPISpecTests {
    static let specPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/openapi.yaml").path

    static let apple = #""apple":{"audiences":["com.example.app"],"jwks_url":"http://127.0.0.1:1/keys"}"#

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

    /// Starts a server with `providers` listed, returns its routes and the document it serves.
    static func serve(_ providers: [String]) async throws -> (routes: [String], document: String) {
        let list = providers.map { "\"\($0)\"" }.joined(separator: ",")
        let h = try await TestHarness.make(
            providers: Authd.builtInProviders,
            config: #"{"mail":{"transport":"outbox"},"providers":[\#(list)],\#(apple),"passkeys":{"rp_id":"example.org","apple_app_ids":["ABCDE12345.org.example.app"]}}"#
        )
        let document = Mutex("")
        try await h.test { client async throws in
            let r = try await client.execute(uri: "/openapi.yaml", method: .get)
            #expect(r.status == .ok)
            #expect(r.headers[.contentType] == "application/yaml; charset=utf-8")
            document.withLock { $0 = String(buffer: r.body) }
        }
        return (h.server.routes, document.withLock { $0 })
    }

    @Test(arguments: [
        ["email", "pin", "password", "apple", "totp", "passkey"], ["email"], ["pin"], ["anonymous"], ["pin", "anonymous"], ["password", "apple"], ["totp"],
        ["passkey"],
    ])
    func everyRouteIsInTheServedDocumentAndTheReverse(providers: [String]) async throws {
        let (routes, document) = try await Self.serve(providers)
        // The pages (/device, /login, /account, /logout, their stylesheets) are HTML for people
        // (contract §7, §13), not part of the API the document describes.
        let pages = [
            "/", "/device", "/login", "/logout", "/account", "/assets", "/not-me", "/oauth/authorize/consent", "/oauth/logout/confirm", "/admin", "/invitation",
        ]
        let served = routes.filter { route in !pages.contains { route.hasSuffix(" " + $0) || route.contains(" " + $0 + "/") } }
        // /device and its four forms; the sign-in pages: / (the account page), /login and three forms,
        // a provider's two shapes of link (an identity provider's way back), /logout, /account and seven forms (sessions, apps,
        // a provider's, the name, the language, deletion, an approval's answer), the stylesheet, the passkey script and the waiting steps' poll script; /not-me
        // and its form; the consent form; the logout confirmation's form; the console's ten pages and
        // ten forms (creating a user among them); /invitation and its three forms.
        #expect(served.count == routes.count - 5 - 19 - 2 - 1 - 1 - 20 - 4)
        let specified = Self.specOperations(document)
        #expect(specified.count > 15)
        #expect(Set(served).subtracting(specified).sorted() == [], "served but not in /openapi.yaml")
        #expect(Set(specified).subtracting(served).sorted() == [], "in /openapi.yaml but not served")
        #expect(document == (try OpenAPIDocument.assemble(providers: ProviderRegistry(Authd.builtInProviders).types(started: providers))))
    }

    @Test func aProviderThatIsNotRunningIsNotInTheDocument() async throws {
        let (_, document) = try await Self.serve(["email", "password"])
        #expect(!document.contains("/api/v1/auth/apple"))
        #expect(!document.contains("/api/v1/auth/pin"))
        #expect(!document.contains("InvalidAppleToken"))
        #expect(document.contains("/api/v1/auth/email/verify"))
        #expect(document.contains("/api/v1/auth/password/login"))
    }

    @Test func theDocsFileIsTheDocumentForEveryBuiltInProvider() throws {
        let yaml = try String(contentsOfFile: Self.specPath, encoding: .utf8)
        let all = try OpenAPIDocument.assemble(providers: Authd.builtInProviders)
        #expect(all == yaml, "regenerate it: swift run authd openapi > docs/openapi.yaml")
        #expect(Self.specOperations(yaml).count == 89)
    }

    /// swift-openapi-generator and other generators name methods after `operationId`, and group by tag.
    @Test func everyOperationHasAUniqueOperationIdAndADeclaredTag() throws {
        let yaml = try OpenAPIDocument.assemble(providers: Authd.builtInProviders)
        let lines = yaml.split(separator: "\n").map(String.init)
        let operationIDs = lines.filter { $0.hasPrefix("      operationId: ") }.map { String($0.dropFirst(19)) }
        #expect(operationIDs.count == Self.specOperations(yaml).count)
        #expect(Set(operationIDs).count == operationIDs.count)
        #expect(operationIDs.allSatisfy { $0.first!.isLowercase && $0.allSatisfy { $0.isLetter } })
        let declared = Set(lines.filter { $0.hasPrefix("  - { name: ") }.map { String($0.dropFirst(12).prefix { $0 != "," }) })
        let used = lines.filter { $0.hasPrefix("      tags: [") }.map { String($0.dropFirst(13).dropLast()) }
        #expect(used.count == operationIDs.count)
        #expect(Set(used).isSubset(of: declared))
        #expect(declared.isSuperset(of: ["email", "pin", "anonymous", "password", "apple"]))
    }

    @Test func aFragmentThatRefersToAComponentNoPartDefinesIsRefused() throws {
        let base = "openapi: 3.1.0\npaths:\n  /a:\n    get: {}\ncomponents:\n  schemas:\n    A: { type: string }\n"
        let dangling = "paths:\n  /b:\n    get: { responses: { \"200\": { $ref: \"#/components/responses/Missing\" } } }\n"
        let error = #expect(throws: OpenAPIFragmentError.self) {
            try OpenAPIDocument.assemble(base: base, fragments: [.init(name: "magic", yaml: dangling)])
        }
        #expect(error?.description == #"the OpenAPI fragment "magic" refers to #/components/responses/Missing, which no part of the document defines"#)
        // A reference to the kernel's component, or to one the fragment adds, is fine.
        let fine = "paths:\n  /b:\n    get: { responses: { \"200\": { $ref: \"#/components/schemas/A\" }, \"201\": { $ref: \"#/components/schemas/B\" } } }\ncomponents:\n  schemas:\n    B: { type: string }\n"
        #expect(throws: Never.self) { try OpenAPIDocument.assemble(base: base, fragments: [.init(name: "magic", yaml: fine)]) }
    }

    /// The DocC catalog lists the components a provider's fragment may refer to: exactly the kernel's.
    @Test func theCatalogListsEveryKernelComponent() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let article = try String(contentsOf: root.appendingPathComponent("Sources/AuthKernel/AuthKernel.docc/OpenAPIComponents.md"), encoding: .utf8)
        let listed = Set(article.split(separator: "\n").filter { $0.hasPrefix("- `") }.map { String($0.dropFirst(3).prefix { $0 != "`" }) })
        let kernel = try OpenAPIDocument.Sections(parsing: KernelOpenAPI.yaml, name: "kernel", allowOtherKeys: true).componentNames
        #expect(kernel.count > 40)
        #expect(listed.subtracting(kernel).sorted() == [], "listed but not the kernel's")
        #expect(kernel.subtracting(listed).sorted() == [], "the kernel's but not listed")
    }

    /// Each provider's part is the YAML file beside its code, embedded whole.
    @Test func eachProvidersFragmentIsTheYAMLFileBesideItsCode() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let providers: [(String, any AuthProvider.Type)] = [
            ("Email", EmailProvider.self), ("Anonymous", AnonymousProvider.self), ("Password", PasswordProvider.self), ("Apple", AppleProvider.self),
        ]
        for (folder, provider) in providers {
            let file = try String(contentsOf: root.appendingPathComponent("Sources/Providers/\(folder)/openapi.yaml"), encoding: .utf8)
            #expect(provider.openAPI.first?.yaml == file, "\(folder)")
        }
    }

    @Test func aFragmentThatWouldRedefineSomethingIsRefused() throws {
        let base = "openapi: 3.1.0\npaths:\n  /a:\n    get: {}\ncomponents:\n  schemas:\n    A: { type: string }\n"
        #expect(throws: OpenAPIFragmentError.self) {
            try OpenAPIDocument.assemble(base: base, fragments: [.init(name: "x", yaml: "paths:\n  /a:\n    post: {}\n")])
        }
        #expect(throws: OpenAPIFragmentError.self) {
            try OpenAPIDocument.assemble(base: base, fragments: [.init(name: "x", yaml: "components:\n  schemas:\n    A: { type: integer }\n")])
        }
        #expect(throws: OpenAPIFragmentError.self) {
            try OpenAPIDocument.assemble(base: base, fragments: [.init(name: "x", yaml: "info:\n  title: mine\n")])
        }
        let merged = try OpenAPIDocument.assemble(
            base: base,
            fragments: [.init(name: "x", yaml: "paths:\n  /b:\n    get: {}\ncomponents:\n  schemas:\n    B: { type: string }\n  parameters:\n    P: { name: p, in: query }\n")]
        )
        #expect(
            merged == "openapi: 3.1.0\npaths:\n  /a:\n    get: {}\n  /b:\n    get: {}\ncomponents:\n  schemas:\n    A: { type: string }\n    B: { type: string }\n  parameters:\n    P: { name: p, in: query }\n"
        )
    }
}

import HTTPTypes
import NIOCore
