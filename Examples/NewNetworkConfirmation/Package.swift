// swift-tools-version:6.2
import PackageDescription

// A sign-in policy as a provider of its own: a sign-in from a network the account has not used
// before needs a code mailed to the account's verified address, whichever provider signed it in.
let package = Package(
    name: "NewNetworkConfirmation",
    platforms: [.macOS(.v14)],
    products: [.library(name: "NewNetworkConfirmation", targets: ["NewNetworkConfirmation"])],
    dependencies: [
        .package(name: "authd", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: ["FullFoundation"]),
    ],
    targets: [
        .target(
            name: "NewNetworkConfirmation",
            dependencies: [.product(name: "AuthKernel", package: "authd"), .product(name: "Hummingbird", package: "hummingbird")]
        ),
        .testTarget(
            name: "NewNetworkConfirmationTests",
            dependencies: [
                "NewNetworkConfirmation",
                .product(name: "AuthKernelTesting", package: "authd"),
                .product(name: "EmailProvider", package: "authd"),
            ]
        ),
    ]
)
