// swift-tools-version:6.2
import PackageDescription

// The same upcoming features Hummingbird turns on: explicit `any`, imports that say what they expose.
// Every warning in authd's own targets is an error, so a provider author who builds against authd
// sees their own warnings and none of ours (the setting does not reach dependencies).
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "authd",
    platforms: [.macOS(.v14), .iOS(.v16)],
    products: [
        .executable(name: "authd", targets: ["authd"]),
        // The server and its command line, for a server of your own: `Authd.main(providers:)`.
        .library(name: "AuthdServer", targets: ["AuthdServer"]),
        // Measurements bench/run makes inside the process; not part of the production binary.
        .executable(name: "authd-bench", targets: ["authd-bench"]),
        .library(name: "AuthKernel", targets: ["AuthKernel"]),
        // For a provider's tests: the kernel and chosen providers on a temporary folder, a manual clock, captured mail and logs.
        .library(name: "AuthKernelTesting", targets: ["AuthKernelTesting"]),
        // For apps and devices: Foundation only, no server code.
        .library(name: "AuthClient", targets: ["AuthClient"]),
        .library(name: "EmailProvider", targets: ["EmailProvider"]),
        .library(name: "AnonymousProvider", targets: ["AnonymousProvider"]),
        .library(name: "PINProvider", targets: ["PINProvider"]),
        .library(name: "PasswordProvider", targets: ["PasswordProvider"]),
        .library(name: "AppleProvider", targets: ["AppleProvider"]),
        .library(name: "TOTPProvider", targets: ["TOTPProvider"]),
        .library(name: "PasskeyProvider", targets: ["PasskeyProvider"]),
        .library(name: "ApprovalProvider", targets: ["ApprovalProvider"]),
        .library(name: "OIDCProvider", targets: ["OIDCProvider"]),
    ],
    dependencies: [
        // FullFoundation only: with the default traits SwiftPM 6.3 rebuilds Hummingbird on every debug/test/release switch.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // Apple's RS256 identity tokens and ES256 client secrets; outbound HTTPS to Apple.
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "4.1.0"..<"6.0.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // The kernel emits through swift-metrics; the executable exposes them in Prometheus format.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // The optional PostgreSQL backend (storage.backend = postgres): several instances, one user base.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // authd's own pages: templates kept as files, rendered server-side.
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),
        // The store's protocol, its records and their encodings: what the storage backends share.
        .target(
            name: "AuthStorage",
            dependencies: ["CSodium"],
            swiftSettings: swiftSettings
        ),
        // The embedded store: an fsync'ed journal and snapshots in the data folder.
        .target(
            name: "FileStore",
            dependencies: [
                "AuthStorage",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Sources/Storage/File",
            swiftSettings: swiftSettings
        ),
        // libxcrypt's crypt_r, for bcrypt hashes imported from another system (Debian: libcrypt-dev).
        .systemLibrary(name: "CCrypt", path: "Sources/CCrypt", providers: [.apt(["libcrypt-dev"])]),
        // The SDK: libsodium for its cryptography, Hummingbird for its routes. Nothing that needs
        // BoringSSL (swift-crypto, NIOSSL): a provider's tests should not compile it twice.
        .target(
            name: "AuthKernel",
            dependencies: [
                "CSodium",
                "AuthStorage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            resources: [.embedInCode("Languages/Catalogs/en.po"), .embedInCode("Languages/Catalogs/de.po")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "AuthClient",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "EmailProvider",
            dependencies: ["AuthKernel", .product(name: "Logging", package: "swift-log")],
            path: "Sources/Providers/Email",
            resources: [.embedInCode("Locales/en.po"), .embedInCode("Locales/de.po"), .embedInCode("openapi.yaml"), .embedInCode("Pages/address.mustache"), .embedInCode("Pages/code.mustache")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "AnonymousProvider",
            dependencies: [
                "AuthKernel", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/Providers/Anonymous",
            resources: [.embedInCode("openapi.yaml")],
            swiftSettings: swiftSettings
        ),
        // PIN brings anonymous sign-in along, as it did before that was a provider of its own.
        .target(
            name: "PINProvider",
            dependencies: [
                "AuthKernel", "AnonymousProvider", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/Providers/PIN",
            resources: [.embedInCode("Locales/en.po"), .embedInCode("Locales/de.po"), .embedInCode("openapi.yaml"), .embedInCode("Pages/login.mustache")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PasswordProvider",
            dependencies: [
                "AuthKernel",
                // Hashes imported from other systems: bcrypt through libxcrypt, Django's PBKDF2 from swift-crypto.
                "CCrypt",
                "CSodium",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Sources/Providers/Password",
            resources: [.embedInCode("Locales/en.po"), .embedInCode("Locales/de.po"),
                .embedInCode("openapi.yaml"), .embedInCode("Pages/login.mustache"), .embedInCode("Pages/password.mustache"), .embedInCode("Pages/verify.mustache"),
                .embedInCode("Pages/reset-code.mustache"), .embedInCode("Pages/reset-wait.mustache"), .embedInCode("Pages/account.mustache"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "AppleProvider",
            dependencies: [
                "AuthKernel",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/Providers/Apple",
            resources: [.embedInCode("openapi.yaml")],
            swiftSettings: swiftSettings
        ),
        // Second factors on the public SDK: a TOTP app (HMAC-SHA-1 from swift-crypto) and recovery codes.
        .target(
            name: "TOTPProvider",
            dependencies: [
                "AuthKernel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Providers/TOTP",
            resources: [.embedInCode("Locales/en.po"), .embedInCode("Locales/de.po"),
                .embedInCode("openapi.yaml"), .embedInCode("Pages/account.mustache"), .embedInCode("Pages/enroll.mustache"),
                .embedInCode("Pages/codes.mustache"),
            ],
            swiftSettings: swiftSettings
        ),
        // Passkeys on the public SDK: WebAuthn ceremonies with a small bounded CBOR reader, ES256 from swift-crypto, EdDSA from the SDK (libsodium).
        .target(
            name: "PasskeyProvider",
            dependencies: [
                "AuthKernel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/Providers/Passkey",
            resources: [.embedInCode("Locales/en.po"), .embedInCode("Locales/de.po"),
                .embedInCode("openapi.yaml"), .embedInCode("Pages/start.mustache"), .embedInCode("Pages/ceremony.mustache"),
                .embedInCode("Pages/account.mustache"),
            ],
            swiftSettings: swiftSettings
        ),
        // Sign-in approved from another device, with number matching: the SDK only.
        .target(
            name: "ApprovalProvider",
            dependencies: ["AuthKernel", .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log")],
            path: "Sources/Providers/Approval",
            resources: [.embedInCode("Locales/en.po"), .embedInCode("Locales/de.po"), .embedInCode("openapi.yaml"), .embedInCode("Pages/start.mustache"), .embedInCode("Pages/wait.mustache")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ApprovalProviderTests",
            dependencies: [
                "AuthKernel", "AuthStorage", "EmailProvider", "ApprovalProvider", "AuthKernelTesting", "FileStore",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Sign in with other OpenID Providers: their keys through the SDK's RemoteKeySet, RSA and EC
        // signatures by JWTKit, Ed25519 by the SDK (libsodium).
        .target(
            name: "OIDCProvider",
            dependencies: [
                "AuthKernel",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/Providers/OIDC",
            resources: [.embedInCode("Locales/en.po"), .embedInCode("Locales/de.po"), .embedInCode("openapi.yaml"), .embedInCode("Pages/start.mustache"), .embedInCode("Pages/account.mustache")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OIDCProviderTests",
            dependencies: [
                "AuthKernel", "AuthStorage", "OIDCProvider", "EmailProvider", "AuthKernelTesting",
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // The PostgreSQL store: the same records and rules as the file store, rows and row locks instead of a journal.
        .target(
            name: "PostgresStore",
            dependencies: [
                "AuthStorage",
                "AuthKernel",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Sources/Storage/Postgres",
            swiftSettings: swiftSettings
        ),
        // The server without what only a production binary needs: routes, pages, the admin socket,
        // webhooks, on the file store. The test kit builds on it, so a provider's tests compile no
        // PostgreSQL driver, no command line, no TLS, no HTTP client, no SMTP, no APNs.
        .target(
            name: "AuthdCore",
            dependencies: [
                "AuthKernel",
                "AuthStorage",
                "FileStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            resources: [
                .embedInCode("OpenAPI/kernel.yaml"),
                .embedInCode("Pages/Templates/layout.mustache"), .embedInCode("Pages/Templates/login.mustache"),
                .embedInCode("Pages/Templates/factor.mustache"), .embedInCode("Pages/Templates/account.mustache"),
                .embedInCode("Pages/Templates/message.mustache"), .embedInCode("Pages/Templates/not-me.mustache"),
                .embedInCode("Pages/Templates/consent.mustache"), .embedInCode("Pages/Templates/logout.mustache"),
                .embedInCode("Pages/Templates/device.mustache"), .embedInCode("Pages/Templates/invitation.mustache"),
                .embedInCode("Pages/Templates/admin-nav.mustache"), .embedInCode("Pages/Templates/admin-overview.mustache"),
                .embedInCode("Pages/Templates/admin-users.mustache"), .embedInCode("Pages/Templates/admin-user.mustache"),
                .embedInCode("Pages/Templates/admin-factor.mustache"), .embedInCode("Pages/Templates/admin-reauth.mustache"),
                .embedInCode("Pages/Templates/admin-setup.mustache"), .embedInCode("Pages/Templates/admin-clients.mustache"),
                .embedInCode("Pages/Templates/admin-client.mustache"), .embedInCode("Pages/Templates/admin-keys.mustache"),
                .embedInCode("Pages/Templates/admin-webhooks.mustache"), .embedInCode("Pages/Templates/admin-audit.mustache"),
                .embedInCode("Pages/Templates/admin-config.mustache"),
                .embedInCode("Pages/Templates/authd.css"), .embedInCode("Pages/Templates/passkey.js"), .embedInCode("Pages/Templates/poll.js"),
                .embedInCode("Locales/en.po"), .embedInCode("Locales/de.po"), .embedInCode("Locales/console-en.po"), .embedInCode("Locales/console-de.po"),
            ],
            swiftSettings: swiftSettings
        ),
        // The whole server: the core, every built-in provider, the command line, PostgreSQL, HTTPS with
        // HTTP/2, APNs and Prometheus.
        .target(
            name: "AuthdServer",
            dependencies: [
                "AuthdCore",
                "AuthKernel",
                "AuthStorage",
                "FileStore",
                "PostgresStore",
                "EmailProvider",
                "AnonymousProvider",
                "PINProvider",
                "PasswordProvider",
                "AppleProvider",
                "TOTPProvider",
                "PasskeyProvider",
                "ApprovalProvider",
                "OIDCProvider",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // HTTPS, and SMTP with STARTTLS or TLS.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // Outbound HTTP (`kernel.http`, webhooks) and APNs pushes (HTTP/2, an ES256 provider token).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // The OpenID Provider's RS256 key.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "authd",
            dependencies: ["AuthdServer"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "authd-bench",
            dependencies: [
                "AuthKernel",
                "AuthStorage",
                "FileStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The test kit: the kernel with chosen providers on a temporary folder, a manual clock,
        // mail in an outbox, logs in memory, request helpers. The repository's tests use it too.
        .target(
            name: "AuthKernelTesting",
            dependencies: [
                "AuthdCore",
                "AuthStorage",
                "FileStore",
                "AuthKernel",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                // Its own client of the router or the socket: no HTTP client library to build.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AuthKernelTests",
            dependencies: ["AuthdServer", "AuthdCore", "EmailProvider",
                "AuthStorage",
                "FileStore",
                "AuthKernel",
                "AuthKernelTesting",
            ],
            swiftSettings: swiftSettings
        ),
        // One suite, both backends: the file store always, PostgreSQL when AUTHD_TEST_POSTGRES_URL names a server.
        .testTarget(
            name: "StoreTests",
            dependencies: ["AuthdServer", "AuthdCore",
                "AuthStorage",
                "AuthKernel",
                "PostgresStore",
                "AuthKernelTesting",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EmailProviderTests",
            dependencies: [
                "AuthKernel",
                "EmailProvider",
                "AuthKernelTesting",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AnonymousProviderTests",
            dependencies: [
                "AnonymousProvider",
                "PINProvider",
                "AuthKernel",
                "AuthKernelTesting",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PINProviderTests",
            dependencies: [
                "AuthdCore",
                "AuthKernel",
                "EmailProvider",
                "PINProvider",
                "AuthKernelTesting",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PasswordProviderTests",
            dependencies: [
                "AuthdCore",
                "AuthKernel",
                "EmailProvider",
                "PINProvider",
                "PasswordProvider",
                "AuthKernelTesting",
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AppleProviderTests",
            dependencies: [
                "AuthKernel",
                // Its outbound HTTP, to a stand-in for Apple.
                "AuthdServer",
                "AppleProvider",
                "AuthKernelTesting",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TOTPProviderTests",
            dependencies: [
                "AuthdCore",
                "AuthKernel",
                "EmailProvider",
                "PasswordProvider",
                "TOTPProvider",
                "AuthKernelTesting",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PasskeyProviderTests",
            dependencies: [
                "AuthKernel",
                "PasswordProvider",
                "TOTPProvider",
                "PasskeyProvider",
                "AuthKernelTesting",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SpecTests",
            dependencies: [
                "AuthdServer", "AuthdCore", "AuthKernel", "EmailProvider", "AnonymousProvider", "PINProvider", "PasswordProvider", "AppleProvider", "TOTPProvider",
                "PasskeyProvider", "AuthKernelTesting", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["authd", "ServerProcessSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AuthClientTests",
            dependencies: ["AuthClient", "authd", "ServerProcessSupport", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // Starts `authd serve` as a real process for end-to-end tests.
        .target(
            name: "ServerProcessSupport",
            dependencies: ["AuthKernelTesting"],
            path: "Tests/ServerProcessSupport",
            swiftSettings: swiftSettings
        ),
    ]
)
