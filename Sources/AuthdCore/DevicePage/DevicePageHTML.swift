import AuthKernel
import Foundation
import Hummingbird

/// The `/device` page's HTML: plain server-rendered forms, no script, one stylesheet of its own.
/// Every value a client chose is escaped; the device's labels are shown as what it reported.
enum DevicePageHTML {
    /// The steps a person goes through.
    enum Step {
        /// Enter the code the device shows, and an email to sign in with (and, when the password
        /// provider runs, optionally the password instead of a mailed code).
        case start(userCode: String, email: String, password: Bool)
        /// Enter the code mailed to `email`.
        case code(email: String)
        /// Answer the second factor the account asks for.
        case factor([String], email: String)
        /// Compare codes, then approve or deny.
        case confirm(DeviceAuthorizations.Pending, email: String)
        /// Finished.
        case done(approved: Bool)
    }

    static func page(_ step: Step, csrf: String, error: String? = nil, productName: String) -> String {
        let body: String
        switch step {
        case .start(let userCode, let email, let password):
            let passwordField =
                password
                ? """
                <label for="password">Password <span class="hint">(or leave it empty and we email you a code)</span></label>
                <input id="password" name="password" type="password" autocomplete="current-password" maxlength="1024">
                """ : ""
            body = """
                <h1>Sign in a device</h1>
                <p>Enter the code your device shows, then sign in to approve it.</p>
                \(alert(error))
                <form method="post" action="/device/start">
                \(hidden(csrf))
                <label for="user_code">Code shown on the device</label>
                <input id="user_code" name="user_code" value="\(escape(userCode))" autocomplete="off" autocapitalize="characters" spellcheck="false" required maxlength="32" placeholder="XXXX-XXXX"\(userCode.isEmpty ? " autofocus" : "")>
                <label for="email">Your email address</label>
                <input id="email" name="email" type="email" value="\(escape(email))" autocomplete="email" required maxlength="254"\(userCode.isEmpty ? "" : " autofocus")>
                \(passwordField)
                <button type="submit">\(password ? "Continue" : "Email me a sign-in code")</button>
                </form>
                """
        case .code(let email):
            body = """
                <h1>Check your email</h1>
                <p>If <strong>\(escape(email))</strong> has an account, a sign-in code is on its way.</p>
                \(alert(error))
                <form method="post" action="/device/verify">
                \(hidden(csrf))
                <label for="code">Sign-in code</label>
                <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]*" required maxlength="16" autofocus>
                <button type="submit">Sign in</button>
                </form>
                <form method="post" action="/device/restart">\(hidden(csrf))<button type="submit" class="secondary">Start again</button></form>
                """
        case .factor(let factors, let email):
            let choices = factors.count == 1
                ? "<input type=\"hidden\" name=\"factor\" value=\"\(escape(factors[0]))\">"
                : factors.enumerated().map { i, f in
                    "<label class=\"choice\"><input type=\"radio\" name=\"factor\" value=\"\(escape(f))\"\(i == 0 ? " checked" : "")> \(factorLabels[f] ?? escape(f))</label>"
                }.joined(separator: "\n")
            let hint = factors.contains("email_code") ? "<p>We have emailed <strong>\(escape(email))</strong> a sign-in code.</p>" : ""
            body = """
                <h1>One more step</h1>
                <p>Your account asks for a second factor.</p>
                \(hint)
                \(alert(error))
                <form method="post" action="/device/factor">
                \(hidden(csrf))
                \(choices)
                <label for="answer">\(factors.count == 1 ? factorLabels[factors[0]] ?? "Code" : "Code")</label>
                <input id="answer" name="answer" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" required maxlength="64" autofocus>
                <button type="submit">Continue</button>
                </form>
                <form method="post" action="/device/restart">\(hidden(csrf))<button type="submit" class="secondary">Start again</button></form>
                """
        case .confirm(let pending, let email):
            let name = pending.device.name.map { "<dd id=\"device-name\">\(escape($0))</dd>" } ?? "<dd id=\"device-name\"><em>no name given</em></dd>"
            let platform = pending.device.platform.map { "<dt>Platform, as reported by the device</dt><dd>\(escape($0))</dd>" } ?? ""
            body = """
                <h1>Approve this device?</h1>
                <p>Signed in as <strong>\(escape(email))</strong>.</p>
                \(alert(error))
                <dl>
                <dt>Name, as reported by the device</dt>\(name)
                \(platform)
                <dt>Code</dt><dd id="user-code" class="code">\(escape(pending.userCode))</dd>
                </dl>
                <p id="question"><strong>Does this code match the one on your device?</strong> If it does not, or you did not start this, deny it: someone may be trying to get into your account.</p>
                <form method="post" action="/device/approve">\(hidden(csrf))<button type="submit" id="approve">Yes, approve this device</button></form>
                <form method="post" action="/device/deny">\(hidden(csrf))<button type="submit" id="deny" class="secondary">No, deny it</button></form>
                """
        case .done(let approved):
            body = approved
                ? "<h1 id=\"result\">Device approved</h1><p role=\"status\">You can go back to your device: it is signing in. We emailed you a notice.</p>"
                : "<h1 id=\"result\">Device denied</h1><p role=\"status\">The device will not be signed in. You can close this page.</p>"
        }
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Sign in a device · \(escape(productName))</title>
            <link rel="stylesheet" href="/device/style.css">
            </head>
            <body>
            <main>
            \(body)
            </main>
            </body>
            </html>

            """
    }

    /// The second factors the page can ask for, as a person would name them (a passkey needs script and an app).
    static let factorLabels = [
        "totp": "Code from your authenticator app", "recovery_code": "A recovery code", "email_code": "The code we emailed you",
    ]

    static func alert(_ error: String?) -> String {
        error.map { "<p class=\"error\" role=\"alert\" id=\"error\">\(escape($0))</p>" } ?? ""
    }

    static func hidden(_ csrf: String) -> String { "<input type=\"hidden\" name=\"csrf\" value=\"\(escape(csrf))\">" }

    /// HTML-escapes text for element content and double-quoted attributes.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for c in text.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// Readable at 320 px, large targets, visible focus; no web fonts, no third-party anything.
    static let css = """
        *{box-sizing:border-box}
        body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1f;background:#f4f4f6}
        main{max-width:28rem;margin:0 auto;padding:1.5rem 1rem;background:#fff;min-height:100vh}
        h1{font-size:1.5rem;margin:0 0 .75rem}
        label,dt{display:block;font-weight:600;margin-top:1rem}
        .hint{font-weight:400;color:#4b4b55}
        dd{margin:.25rem 0 0}
        input{display:block;width:100%;font-size:1.25rem;padding:.6rem .7rem;margin-top:.3rem;border:2px solid #6b6b76;border-radius:.4rem}
        button{display:block;width:100%;font-size:1.1rem;padding:.8rem;margin-top:1.25rem;border:0;border-radius:.4rem;background:#1a56db;color:#fff;cursor:pointer}
        button.secondary{background:#fff;color:#1a56db;border:2px solid #1a56db}
        input:focus,button:focus{outline:3px solid #f5a623;outline-offset:2px}
        .code{font:700 1.6rem/1.2 ui-monospace,Menlo,monospace;letter-spacing:.15em}
        .error{background:#fde8e8;color:#9b1c1c;padding:.6rem .8rem;border-radius:.4rem}
        label.choice{font-weight:400;display:flex;gap:.5rem;align-items:center}
        label.choice input{width:auto;margin:0}
        form{margin:0}
        """
}
