import AuthdCore
import AuthKernel
/// The version `authd --version` prints.
enum AuthdVersion {
    static let current = "0.1.0"
}
