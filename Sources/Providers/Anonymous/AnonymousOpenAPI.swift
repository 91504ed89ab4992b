public import AuthKernel

extension AnonymousProvider {
    /// Anonymous sign-in's and user names' operations in `GET /openapi.yaml`.
    public static let openAPI = [
        OpenAPIFragment(
            name: "anonymous",
            yaml: PackageResources.openapi_yaml)
    ]
}
