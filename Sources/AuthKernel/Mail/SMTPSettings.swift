/// `mail.smtp`: where and how to deliver.
package struct SMTPSettings: Sendable {
    /// How the connection is protected.
    package enum Security: String, Sendable {
        /// Plain connection upgraded with STARTTLS (required); port 587.
        case starttls
        /// TLS from the first byte; port 465.
        case tls
        /// No TLS: only for a relay on the loopback interface.
        case none
    }

    /// Server host name (also the name its certificate must carry).
    package var host: String
    /// Port.
    package var port: Int
    /// Protection.
    package var security: Security
    /// User for AUTH, if any.
    package var username: String?
    /// Password for AUTH (from `password` or `password_file`).
    package var password: String?
    /// Name sent with EHLO.
    package var helo: String
    /// Extra PEM certificates to trust (e.g. a private CA), besides the system's.
    package var caFile: String?
    /// Limit for each step (connect, each reply), seconds.
    package var timeout: Int

    /// Creates settings.
    package init(host: String, port: Int, security: Security, username: String? = nil, password: String? = nil, helo: String = "localhost", caFile: String? = nil, timeout: Int = 30) {
        self.host = host
        self.port = port
        self.security = security
        self.username = username
        self.password = password
        self.helo = helo
        self.caFile = caFile
        self.timeout = timeout
    }
}
