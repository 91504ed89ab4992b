import AnonymousProvider
public import AuthKernel

extension PINProvider {
    /// The PIN provider's operations in `GET /openapi.yaml`, with anonymous sign-in's, which it brings along.
    public static let openAPI = [
        OpenAPIFragment(
            name: "pin",
            yaml: PackageResources.openapi_yaml)
    ] + AnonymousProvider.openAPI
}
