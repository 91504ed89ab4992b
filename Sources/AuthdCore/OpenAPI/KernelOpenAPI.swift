/// The kernel's part of `GET /openapi.yaml`: the document's header, the kernel's operations, and
/// the components providers' fragments reference. Each running provider's ``OpenAPIFragment``s
/// are appended to it (see ``OpenAPIDocument``); `authd openapi` prints the result, and
/// docs/openapi.yaml is that for the built-in providers.
package enum KernelOpenAPI {
    /// The YAML text: `kernel.yaml` beside this file, embedded in the binary.
    package static let yaml = String(decoding: PackageResources.kernel_yaml, as: UTF8.self)
}
