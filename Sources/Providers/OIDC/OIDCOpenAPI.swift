public import AuthKernel

extension OIDCProvider {
    /// The oidc provider's operations in `GET /openapi.yaml`.
    public static let openAPI = [OIDCFragment.fragment]
}

enum OIDCFragment {
    static let fragment = OpenAPIFragment(name: "oidc", yaml: PackageResources.openapi_yaml)
}
