extension QRCode {
    /// The symbol as inline SVG for a page: one path of the dark modules (each row's runs
    /// merged), black on a white square with the 4-module quiet zone, whatever the page's colours,
    /// sized by its `viewBox` (one unit a module) so that CSS scales it; `role="img"`, with
    /// `title` (escaped) as its `<title>` and `aria-label`.
    public func svg(title: String) -> String {
        let quiet = 4
        let side = size + 2 * quiet
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard self[x, y] else {
                    x += 1
                    continue
                }
                let start = x
                while x < size && self[x, y] { x += 1 }
                path += "M\(start + quiet) \(y + quiet)h\(x - start)v1h-\(x - start)z"
            }
        }
        let label = XMLText.escaped(title)
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(side) \(side)\" role=\"img\" aria-label=\"\(label)\" shape-rendering=\"crispEdges\">"
            + "<title>\(label)</title><rect width=\"\(side)\" height=\"\(side)\" fill=\"#fff\"/><path fill=\"#000\" d=\"\(path)\"/></svg>"
    }
}
