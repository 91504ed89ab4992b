// swift-tools-version:6.2
import PackageDescription

// The example's server: authd with its built-in providers and the invite provider. A package of its
// own, as a deployment is, so the provider's package and its tests build only the SDK and the test
// kit, never the whole server (PostgreSQL, the command line, HTTP/2, APNs).
let package = Package(
    name: "InviteAuthd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "invite-authd", targets: ["invite-authd"]),
    ],
    dependencies: [
        .package(name: "authd", path: "../../.."),
        .package(name: "InviteCodeProvider", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "invite-authd",
            dependencies: [
                .product(name: "InviteCodeProvider", package: "InviteCodeProvider"),
                .product(name: "AuthdServer", package: "authd"),
            ]
        ),
    ]
)
