package import AuthStorage
package import Hummingbird
import NIOCore

extension JSONWriter {
    /// A `200 application/json` response with the bytes written.
    package func response(status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
