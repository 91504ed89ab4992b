public import AuthKernel

extension ApprovalProvider {
    /// The approval provider's operations in `GET /openapi.yaml`.
    public static let openAPI = [
        OpenAPIFragment(
            name: "approval",
            yaml: PackageResources.openapi_yaml)
    ]
}
