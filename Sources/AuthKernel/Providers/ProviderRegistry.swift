/// The providers a build contains, by id; the configuration chooses which of them start.
package struct ProviderRegistry: Sendable {
    /// Provider types in default order.
    package let types: [any AuthProvider.Type]

    /// Creates a registry. Ids must be unique.
    package init(_ types: [any AuthProvider.Type]) {
        precondition(Set(types.map { $0.id }).count == types.count, "provider ids must be unique")
        self.types = types
    }

    /// Ids of the available providers.
    package var ids: [String] { types.map { $0.id } }

    /// How each provider's way of signing in is named in mail, by id.
    package var methodNames: [String: String] { Dictionary(uniqueKeysWithValues: types.map { ($0.id, $0.methodName) }) }

    /// Ids of the providers started when the configuration does not list `providers`.
    package var defaultIDs: [String] { types.filter { $0.startsByDefault }.map { $0.id } }

    /// Configuration sections not named by their provider's id (``AuthProvider/configSection``).
    package var sectionNames: [String: String] {
        Dictionary(uniqueKeysWithValues: types.filter { $0.configSection != $0.id }.map { ($0.id, $0.configSection) })
    }

    /// The types of the listed providers, in the order listed (ids this build lacks are left out).
    package func types(started ids: [String]) -> [any AuthProvider.Type] {
        ids.compactMap { id in types.first { $0.id == id } }
    }

    /// Creates the providers listed in `config.providers`, each with its configuration section.
    /// - Throws: ``ConfigError`` from a provider's configuration.
    package func instantiate(kernel: Kernel) throws -> [any AuthProvider] {
        try kernel.config.providers.map { id in
            guard let type = types.first(where: { $0.id == id }) else {
                throw ConfigError("providers lists \"\(id)\", which this build does not have")
            }
            var section = kernel.config.providerSections[id] ?? ConfigSection(path: type.configSection, values: [:])
            section.declare(type.settings.map(\.key), by: "the provider \"\(id)\"")
            let keys = type.settings.map(\.key)
            if let twice = keys.first(where: { key in keys.filter { $0 == key }.count > 1 }) {
                throw ConfigError("provider \"\(id)\" declares the setting \(twice) twice")
            }
            let templatesBefore = Set(kernel.mailer.templates.names)
            for declared in type.mailTemplates { try kernel.mailer.register(declared.name, declared.template) }
            try kernel.messages.register(type.messageCatalogs, owner: "the provider \"\(id)\"", prefix: id + ".")
            kernel.audit.declare(type.auditEvents)
            let provider = try type.init(kernel: kernel, config: &section)
            try section.rejectUnknownKeys()
            // A provider's mail is its own: one provider can never word another's.
            if let foreign = kernel.mailer.templates.names.first(where: { !templatesBefore.contains($0) && !$0.hasPrefix(id + ".") }) {
                throw ConfigError("provider \"\(id)\" registered the mail template \"\(foreign)\"; a provider's templates are named \"\(id).NAME\"")
            }
            return provider
        }
    }
}
