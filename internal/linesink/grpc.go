package linesink

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/otelbench/otelbench/internal/otlpcodec"
	"github.com/otelbench/otelbench/internal/otlpgrpc"
	"github.com/otelbench/otelbench/internal/signal"
)

// GRPCServer returns the accounting-only OTLP/gRPC receiver: a logs Export
// is accounted for (the same walk of the protobuf bytes as over HTTP) and
// answered OK, or INVALID_ARGUMENT when it cannot be read; metrics and
// traces Exports are answered OK and ignored. Messages travel as raw bytes
// (otlpgrpc.Codec), up to DefaultMaxBody; gzip, zstd and snappy are
// accepted. The caller serves it and stops it.
func (a *Accounting) GRPCServer() *grpc.Server {
	gs := grpc.NewServer(
		grpc.ForceServerCodecV2(otlpgrpc.Codec{}),
		grpc.MaxRecvMsgSize(int(DefaultMaxBody)),
	)
	for _, sig := range signal.All() {
		gs.RegisterService(otlpgrpc.ServiceDesc(sig, func(_ context.Context, dec func(any) error) (any, error) {
			return a.export(sig, dec)
		}), nil)
	}
	return gs
}

// export serves one Export RPC of sig.
func (a *Accounting) export(sig signal.Signal, dec func(any) error) (any, error) {
	var m otlpgrpc.Message
	if err := dec(&m); err != nil {
		return nil, err // gRPC's own status: too large, bad compression
	}
	defer m.Free()
	if sig != signal.Logs {
		return otlpgrpc.Raw(nil), nil
	}
	if err := a.account(otlpcodec.EncodingProto, m.Bytes(nil), time.Now()); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return otlpgrpc.Raw(nil), nil // an empty ExportLogsServiceResponse
}

// AckGRPC is an ingestsrv.AckFunc: it accounts for a logs Export that the
// ingest server answered OK (`--sink serve` over gRPC), as Tap does for
// OTLP/HTTP, the acknowledgement being the receipt time.
func (a *Accounting) AckGRPC(sig signal.Signal, msg []byte) {
	if sig == signal.Logs {
		a.acked(otlpcodec.EncodingProto, msg, time.Now())
	}
}
