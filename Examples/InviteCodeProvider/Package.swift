// swift-tools-version:6.2
import PackageDescription

// A sign-in method written the way a third party would: its own package, depending on authd by
// path (a real one would name authd's repository and a version). Its tests need the SDK and the test
// kit only; the server that runs it is the package in Server/.
let package = Package(
    name: "InviteCodeProvider",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "InviteCodeProvider", targets: ["InviteCodeProvider"]),
    ],
    dependencies: [
        .package(name: "authd", path: "../.."),
        // The routes a provider returns are Hummingbird's; the same traits as authd's, so it is built once.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: ["FullFoundation"]),
    ],
    targets: [
        .target(
            name: "InviteCodeProvider",
            dependencies: [
                .product(name: "AuthKernel", package: "authd"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            // The OpenAPI part, the sign-in page's template and its sentences beside the code, embedded in the binary.
            resources: [.embedInCode("Locales/en.po"), .embedInCode("Locales/de.po"), .embedInCode("openapi.yaml"), .embedInCode("Pages/code.mustache")]
        ),
        .testTarget(
            name: "InviteCodeProviderTests",
            dependencies: [
                "InviteCodeProvider",
                .product(name: "AuthKernelTesting", package: "authd"),
                .product(name: "EmailProvider", package: "authd"),
            ]
        ),
    ]
)
