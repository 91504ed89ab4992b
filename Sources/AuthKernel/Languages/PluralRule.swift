/// A PO header's `Plural-Forms` (`nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : …);`): which of
/// a message's forms a count takes. The expression is C's, restricted to what catalogs use: `n`,
/// integers, parentheses, `! % * / + - < <= > >= == != && || ?:`.
struct PluralRule: Sendable {
    indirect enum Expression: Sendable {
        case n
        case number(Int)
        case not(Expression)
        case binary(String, Expression, Expression)
        case choice(Expression, Expression, Expression)
    }

    let count: Int
    let expression: Expression

    /// English's and German's: one form for 1, another for the rest.
    static let oneOther = PluralRule(count: 2, expression: .binary("!=", .n, .number(1)))

    init(count: Int, expression: Expression) {
        self.count = count
        self.expression = expression
    }

    /// Parses a `Plural-Forms` header value.
    /// - Throws: ``ConfigError`` for one it cannot read.
    init(parsing header: String, name: String) throws(ConfigError) {
        var count: Int?
        var plural: String?
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.filter { !$0.isWhitespace } }
            guard pair.count == 2 else { continue }
            if pair[0] == "nplurals" { count = Int(pair[1]) }
            if pair[0] == "plural" { plural = String(part.split(separator: "=", maxSplits: 1)[1]) }
        }
        guard let count, (1...6).contains(count), let plural else {
            throw ConfigError("\(name): Plural-Forms must say nplurals=N (1 to 6); plural=EXPRESSION")
        }
        var parser = Parser(tokens: try Parser.tokens(plural, name: name), name: name)
        let expression = try parser.ternary()
        guard parser.position == parser.tokens.count else { throw ConfigError("\(name): Plural-Forms' expression has text left over") }
        self.init(count: count, expression: expression)
    }

    /// The form for `n`, within the forms there are.
    func form(_ n: Int) -> Int { min(max(Self.evaluate(expression, n), 0), count - 1) }

    static func evaluate(_ e: Expression, _ n: Int) -> Int {
        switch e {
        case .n: return n
        case .number(let v): return v
        case .not(let a): return evaluate(a, n) == 0 ? 1 : 0
        case .choice(let c, let a, let b): return evaluate(c, n) != 0 ? evaluate(a, n) : evaluate(b, n)
        case .binary(let op, let a, let b):
            let x = evaluate(a, n), y = evaluate(b, n)
            switch op {
            case "%": return y == 0 ? 0 : x % y
            case "/": return y == 0 ? 0 : x / y
            case "*": return x &* y
            case "+": return x &+ y
            case "-": return x &- y
            case "<": return x < y ? 1 : 0
            case "<=": return x <= y ? 1 : 0
            case ">": return x > y ? 1 : 0
            case ">=": return x >= y ? 1 : 0
            case "==": return x == y ? 1 : 0
            case "!=": return x != y ? 1 : 0
            case "&&": return x != 0 && y != 0 ? 1 : 0
            default: return x != 0 || y != 0 ? 1 : 0
            }
        }
    }

    struct Parser {
        let tokens: [String]
        let name: String
        var position = 0

        init(tokens: [String], name: String) {
            self.tokens = tokens
            self.name = name
        }

        static func tokens(_ text: String, name: String) throws(ConfigError) -> [String] {
            var out: [String] = []
            let chars = Array(text.filter { !$0.isWhitespace })
            var i = 0
            while i < chars.count {
                let c = chars[i]
                if c.isNumber {
                    var j = i
                    while j < chars.count, chars[j].isNumber, j - i < 9 { j += 1 }
                    out.append(String(chars[i..<j]))
                    i = j
                } else if i + 1 < chars.count, ["<=", ">=", "==", "!=", "&&", "||"].contains(String(chars[i...i + 1])) {
                    out.append(String(chars[i...i + 1]))
                    i += 2
                } else if "n()?:!%*/+-<>".contains(c) {
                    out.append(String(c))
                    i += 1
                } else {
                    throw ConfigError("\(name): Plural-Forms' expression has \"\(c)\"")
                }
                guard out.count <= 256 else { throw ConfigError("\(name): Plural-Forms' expression is too long") }
            }
            return out
        }

        var next: String? { position < tokens.count ? tokens[position] : nil }

        mutating func expect(_ token: String) throws(ConfigError) {
            guard next == token else { throw ConfigError("\(name): Plural-Forms' expression expected \"\(token)\"") }
            position += 1
        }

        mutating func ternary() throws(ConfigError) -> Expression {
            let condition = try binary(0)
            guard next == "?" else { return condition }
            position += 1
            let yes = try ternary()
            try expect(":")
            return .choice(condition, yes, try ternary())
        }

        static let levels: [[String]] = [["||"], ["&&"], ["==", "!="], ["<", "<=", ">", ">="], ["+", "-"], ["*", "/", "%"]]

        mutating func binary(_ level: Int) throws(ConfigError) -> Expression {
            guard level < Self.levels.count else { return try unary() }
            var left = try binary(level + 1)
            while let op = next, Self.levels[level].contains(op) {
                position += 1
                left = .binary(op, left, try binary(level + 1))
            }
            return left
        }

        mutating func unary() throws(ConfigError) -> Expression {
            guard let token = next else { throw ConfigError("\(name): Plural-Forms' expression ends early") }
            position += 1
            switch token {
            case "!": return .not(try unary())
            case "n": return .n
            case "(":
                let inner = try ternary()
                try expect(")")
                return inner
            default:
                guard let v = Int(token) else { throw ConfigError("\(name): Plural-Forms' expression has \"\(token)\" where a value belongs") }
                return .number(v)
            }
        }
    }
}
