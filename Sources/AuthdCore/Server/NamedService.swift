import ServiceLifecycle

/// A service as ServiceLifecycle's log names it: by its type's name only. A service group writes
/// each service's description at debug level ("Starting service", and when it ends or fails), and
/// a struct's default description is every value it holds: a provider's settings, a secret, the
/// parsed configuration file. Every service the server runs is wrapped in one (contract §17).
struct NamedService: Service, CustomStringConvertible, CustomReflectable {
    let service: any Service
    /// The wrapped service's type, `ConfigReloader`.
    let description: String

    init(_ service: any Service) {
        self.service = service
        description = "\(type(of: service))"
    }

    /// No children: a `dump` sees nothing inside either.
    var customMirror: Mirror { Mirror(self, children: [:]) }

    func run() async throws { try await service.run() }
}
