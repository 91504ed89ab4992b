import AuthKernel
import Foundation
import Testing

struct ConfigTests {
    func parse(_ json: String) throws -> AuthConfig {
        try AuthConfig.parse(Data(json.utf8), host: "127.0.0.1", port: 8080, availableProviders: ["email"])
    }

    func message(_ json: String) -> String? {
        do {
            _ = try parse(json)
            return nil
        } catch let error as ConfigError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func defaultsAreSafe() throws {
        let c = try parse("{}")
        #expect(c.issuer == "http://127.0.0.1:8080")
        #expect(c.audience == "authd")
        #expect(c.providers == ["email"])
        #expect(c.tokens.accessTTL == 3600 && c.tokens.refreshTTL == 2_592_000 && c.tokens.refreshReuseGrace == 10)
        #expect(c.mail.transport == "log")
    }

    @Test func readsTheContractKeys() throws {
        let c = try parse(#"{"issuer":"https://auth.example.com","audience":"app","tokens":{"access_ttl":600,"refresh_ttl":86400,"refresh_reuse_grace":5},"mail":{"transport":"outbox","from":"x <a@b.c>"},"email":{"code_ttl":120}}"#)
        #expect(c.issuer == "https://auth.example.com" && c.audience == "app")
        #expect(c.tokens.accessTTL == 600 && c.tokens.refreshTTL == 86400 && c.tokens.refreshReuseGrace == 5)
        #expect(c.mail.transport == "outbox")
        #expect(c.providerSections["email"]?.contains("code_ttl") == true)
    }

    @Test func namesTheBadKey() {
        #expect(message(#"{"isuer":"x"}"#) == "unknown configuration key isuer")
        #expect(message(#"{"tokens":{"access_tll":1}}"#) == "unknown configuration key tokens.access_tll")
        #expect(message(#"{"tokens":{"access_ttl":"1h"}}"#) == "tokens.access_ttl must be a whole number, not a string")
        #expect(message(#"{"tokens":{"access_ttl":0}}"#)?.hasPrefix("tokens.access_ttl must be between 1 and") == true)
        #expect(message(#"{"mail":{"transport":"pigeon"}}"#)?.hasPrefix("mail.transport must be one of") == true)
        #expect(message(#"{"providers":["email","apple"]}"#)?.contains("\"apple\"") == true)
        #expect(message(#"{"issuer":"ftp://x"}"#)?.hasPrefix("issuer must be an http or https URL") == true)
        #expect(message("[1]") == "the configuration file must hold a JSON object")
        #expect(message("{") != nil)
    }
}
