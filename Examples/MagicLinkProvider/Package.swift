// swift-tools-version:6.2
import PackageDescription

// The DocC guide's recipe "Mailing a sign-in link", as a package of its own that depends on authd by
// path: a single-use link mailed to an address; opening it in the app signs in.
let package = Package(
    name: "MagicLinkProvider",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "MagicLinkProvider", targets: ["MagicLinkProvider"])
    ],
    dependencies: [
        .package(name: "authd", path: "../.."),
        // The routes a provider returns are Hummingbird's; the same traits as authd's, so it is built once.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: ["FullFoundation"]),
    ],
    targets: [
        .target(
            name: "MagicLinkProvider",
            dependencies: [
                .product(name: "AuthKernel", package: "authd"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "MagicLinkProviderTests",
            dependencies: [
                "MagicLinkProvider",
                .product(name: "AuthKernelTesting", package: "authd"),
            ]
        ),
    ]
)
