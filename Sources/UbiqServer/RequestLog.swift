import Foundation
import Hummingbird
import Logging

/// One line per request at `info`: method, route (the pattern, e.g.
/// `/v1/containers/{container}/commit`, so item IDs stay out of the log), status, bytes in
/// and out, and time. Never a header or a body, so never a token or a password.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard logger.logLevel <= .info else { return try await next(request, context) }
        let started = ContinuousClock.now
        let bytesIn = request.headers[.contentLength].flatMap(Int.init) ?? 0
        do {
            let response = try await next(request, context)
            log(request, context, status: Int(response.status.code), bytesIn: bytesIn, bytesOut: response.body.contentLength, since: started)
            return response
        } catch {
            log(request, context, status: Int((error as? any HTTPResponseError)?.status.code ?? 500), bytesIn: bytesIn, bytesOut: nil, since: started)
            throw error
        }
    }

    func log(_ request: Request, _ context: Context, status: Int, bytesIn: Int, bytesOut: Int?, since started: ContinuousClock.Instant) {
        let d = ContinuousClock.now - started
        let ms = Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
        let route = context.endpointPath ?? String(request.uri.path.prefix(200))
        logger.info("\(request.method) \(route) \(status) in \(bytesIn) B out \(bytesOut.map { "\($0) B" } ?? "-") \(String(format: "%.1f", ms)) ms")
    }
}
