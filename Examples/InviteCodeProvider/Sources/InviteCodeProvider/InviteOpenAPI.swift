public import AuthKernel

extension InviteCodeProvider {
    /// The redeem operation in the server's `GET /openapi.yaml`, beside the kernel's and other providers' parts.
    public static let openAPI = [OpenAPIFragment(name: "invite", yaml: PackageResources.openapi_yaml)]
}
