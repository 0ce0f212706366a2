package otlpgrpc

import (
	"context"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/otelbench/otelbench/internal/signal"
)

// Service returns the fully qualified OTLP service name of sig
// (opentelemetry/proto/collector/*/v1/*_service.proto).
func Service(sig signal.Signal) string {
	return signal.Pick(sig, "opentelemetry.proto.collector.logs.v1.LogsService",
		"opentelemetry.proto.collector.metrics.v1.MetricsService", "opentelemetry.proto.collector.trace.v1.TraceService")
}

// Method returns the full method name of sig's Export RPC, as gRPC puts it
// in the :path header ("/<service>/Export").
func Method(sig signal.Signal) string { return "/" + Service(sig) + "/Export" }

// SignalOf returns the signal whose Export RPC is the full method name m.
func SignalOf(m string) (signal.Signal, bool) {
	for _, sig := range signal.All() {
		if m == Method(sig) {
			return sig, true
		}
	}
	return 0, false
}

// CodeName returns the OTLP and gRPC specifications' name of a status code
// (UNAVAILABLE, RESOURCE_EXHAUSTED, ...), as reports and metric labels show it.
func CodeName(c codes.Code) string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "CODE_" + strconv.Itoa(int(c))
}

var codeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
	"PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}

// ExportFunc serves one Export RPC: dec fills an *otlpgrpc.Message with the
// request; the answer is a *Message or a status error.
type ExportFunc func(ctx context.Context, dec func(any) error) (any, error)

// ServiceDesc describes the OTLP service of sig for grpc.Server's
// RegisterService: one unary method, Export, served by export, whose
// request and answer travel as raw protobuf (Codec).
func ServiceDesc(sig signal.Signal, export ExportFunc) *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: Service(sig),
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{
			MethodName: "Export",
			Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				return export(ctx, dec)
			},
		}},
	}
}

// Discard is an ExportFunc that answers every Export an empty response
// (a full success) without looking at the message: the server of a
// benchmark that measures gRPC alone (scripts/grpcfloor).
func Discard(_ context.Context, dec func(any) error) (any, error) {
	var m Message
	if err := dec(&m); err != nil {
		return nil, err
	}
	m.Free()
	return Raw(nil), nil
}
