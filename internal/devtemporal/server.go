// Package devtemporal runs an embedded Temporal server with SQLite
// persistence and the Temporal Web UI inside the assent process. It is a
// small version of what `temporal server start-dev` does, for `assent dev`
// and `assent temporal`.
package devtemporal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiserveroptions "github.com/temporalio/ui-server/v2/server/server_options"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/assent-hq/assent/internal/freeport"
	"github.com/assent-hq/assent/internal/logging"
)

const clusterName = "active"

// Options configure the embedded server. Zero ports pick free ones.
type Options struct {
	// IP the frontend and UI listen on; 127.0.0.1 when empty.
	IP string
	// FrontendPort is the gRPC port clients and workers dial.
	FrontendPort int
	// UIPort is the Temporal Web UI port; a negative value disables the UI.
	UIPort int
	// DatabaseFile holds the server's state. Empty keeps it in memory.
	DatabaseFile string
	// Namespace is created on start when missing.
	Namespace string
	// CodecEndpoint is where the UI decodes payloads (with the browser's
	// credentials); empty shows them as stored.
	CodecEndpoint string
	// UIWriteActions lets the UI change workflows (reset, terminate,
	// cancel, signal, update, start, batch actions); off, it only reads.
	UIWriteActions bool
	Logger         *slog.Logger
}

// Server is a running embedded Temporal server.
type Server struct {
	server       temporal.Server
	log          *logging.ServerLogger
	ui           *uiserver.Server
	frontendAddr string
	uiAddr       string
}

// DefaultIP is the address the server listens on unless Options.IP says.
const DefaultIP = "127.0.0.1"

// Start brings the server (and the UI unless disabled) up and returns once
// the frontend accepts connections.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.IP == "" {
		o.IP = DefaultIP
	}
	if o.Namespace == "" {
		return nil, errors.New("devtemporal: namespace is required")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	// Both fixed ports are checked before anything starts: a server started
	// and stopped again would bury the one line that matters in warnings.
	var err error
	if o.FrontendPort, err = portOrFree(o.IP, o.FrontendPort, FrontendPort); err != nil {
		return nil, err
	}
	if o.UIPort >= 0 {
		if o.UIPort, err = portOrFree(o.IP, o.UIPort, UIPort); err != nil {
			return nil, err
		}
	}
	httpPort, err := freeport.Pick(o.IP)
	if err != nil {
		return nil, err
	}

	sqlConf, err := sqlConfig(o)
	if err != nil {
		return nil, err
	}
	conf, err := serverConfig(o, httpPort, sqlConf)
	if err != nil {
		return nil, err
	}
	hosts := map[primitives.ServiceName]static.Hosts{}
	for name, svc := range conf.Services {
		hosts[primitives.ServiceName(name)] = static.SingleLocalHost(net.JoinHostPort(o.IP, strconv.Itoa(svc.RPC.GRPCPort)))
	}
	dyn := dynamicconfig.StaticClient{
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
		// Newly added search attributes must be usable at once.
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): true,
		// One shard reads its transfer queue at most 20 times a second by
		// default: each workflow task after an activity waited 0 to 50 ms
		// in line (docs/benchmarks.md, "Where a decision's time went"); the
		// production dynamic config in deploy/ sets the same.
		dynamicconfig.TransferProcessorMaxPollRPS.Key(): 1000,
	}
	log := logging.Server(o.Logger, slog.LevelWarn)
	srv, err := newServer(conf, hosts, log, dyn)
	if err != nil {
		return nil, err
	}
	s := &Server{server: srv, log: log, frontendAddr: net.JoinHostPort(o.IP, strconv.Itoa(o.FrontendPort))}
	if err := waitFrontend(ctx, s.frontendAddr); err != nil {
		s.Stop()
		return nil, fmt.Errorf("temporal frontend: %w", err)
	}
	log.Started()

	if o.UIPort >= 0 {
		s.uiAddr = net.JoinHostPort(o.IP, strconv.Itoa(o.UIPort))
		s.ui = uiserver.NewServer(uiserveroptions.WithConfigProvider(&uiconfig.Config{
			Host:                o.IP,
			Port:                o.UIPort,
			TemporalGRPCAddress: s.frontendAddr,
			EnableUI:            true,
			DefaultNamespace:    o.Namespace,
			CORS:                uiconfig.CORS{CookieInsecure: true},
			HideLogs:            true,
			DisableNewsFetch:    true,
			Codec:               uiconfig.Codec{Endpoint: o.CodecEndpoint, IncludeCredentials: o.CodecEndpoint != ""},
			DisableWriteActions: !o.UIWriteActions,
		}))
		go func() {
			if err := s.ui.Start(); err != nil {
				o.Logger.Error("temporal ui stopped", "error", err)
			}
		}()
		if err := waitHTTP(ctx, "http://"+s.uiAddr+"/"); err != nil {
			s.Stop()
			return nil, fmt.Errorf("temporal ui: %w", err)
		}
	}
	return s, nil
}

// newServer builds and starts the server. The server's constructor logs
// fatal errors (a port it cannot bind, say) by panicking; that becomes an
// error here so `assent dev` can say what went wrong and exit cleanly.
func newServer(conf *config.Config, hosts map[primitives.ServiceName]static.Hosts, log *logging.ServerLogger, dyn dynamicconfig.StaticClient) (srv temporal.Server, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("start temporal server: %v", r)
		}
	}()
	srv, err = temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(log),
		temporal.WithDynamicConfigClient(dyn),
	)
	if err != nil {
		return nil, fmt.Errorf("create temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("start temporal server: %w", err)
	}
	return srv, nil
}

// FrontendAddress is host:port for Temporal clients.
func (s *Server) FrontendAddress() string { return s.frontendAddr }

// UIAddress is host:port of the Web UI, empty when disabled.
func (s *Server) UIAddress() string { return s.uiAddr }

// Stopping says the process embedding the server has begun to stop: its
// worker's pollers, cut off from here on, are logged as a stop's are (see
// ServerLogger.Stopping).
func (s *Server) Stopping() { s.log.Stopping() }

// Stop shuts the UI and the server down, quietly: see ServerLogger.Stopping.
func (s *Server) Stop() {
	s.log.Stopping()
	if s.ui != nil {
		s.ui.Stop()
	}
	_ = s.server.Stop()
}

func sqlConfig(o Options) (*config.SQL, error) {
	conf := &config.SQL{PluginName: sqliteplugin.PluginName}
	if o.DatabaseFile == "" {
		conf.ConnectAttributes = map[string]string{"mode": "memory", "cache": "shared"}
		conf.DatabaseName = fmt.Sprintf("assent-%d", time.Now().UnixNano())
	} else {
		// The plugin turns every key but a few URI parameters into a pragma
		// of that exact name: "journal_mode", not "_journal_mode".
		conf.ConnectAttributes = map[string]string{"mode": "rwc", "journal_mode": "wal", "busy_timeout": "5000", "synchronous": "normal"}
		conf.DatabaseName = o.DatabaseFile
	}
	fresh := o.DatabaseFile == ""
	if !fresh {
		if _, err := os.Stat(o.DatabaseFile); errors.Is(err, os.ErrNotExist) {
			fresh = true
			if err := os.MkdirAll(filepath.Dir(o.DatabaseFile), 0o700); err != nil {
				return nil, err
			}
		}
	}
	if fresh {
		if err := sqliteschema.SetupSchema(conf); err != nil {
			return nil, fmt.Errorf("set up temporal schema: %w", err)
		}
	}
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, o.Namespace, false, nil)
	if err != nil {
		return nil, err
	}
	if err := sqliteschema.CreateNamespaces(conf, ns); err != nil {
		return nil, fmt.Errorf("create namespace: %w", err)
	}
	return conf, nil
}

func serverConfig(o Options, httpPort int, sqlConf *config.SQL) (*config.Config, error) {
	frontend := net.JoinHostPort(o.IP, strconv.Itoa(o.FrontendPort))
	conf := &config.Config{}
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = o.IP
	conf.Persistence.DefaultStore = "sqlite"
	conf.Persistence.VisibilityStore = "sqlite"
	conf.Persistence.NumHistoryShards = 1
	conf.Persistence.DataStores = map[string]config.DataStore{"sqlite": {SQL: sqlConf}}
	conf.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{
			clusterName: {
				Enabled:                true,
				InitialFailoverVersion: 1,
				RPCAddress:             frontend,
				HTTPAddress:            net.JoinHostPort(o.IP, strconv.Itoa(httpPort)),
				// No ClusterID: the server makes one (a UUID) on first
				// start and warns about any other.
			},
		},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	conf.Services = map[string]config.Service{}
	for _, name := range []string{"frontend", "history", "matching", "worker"} {
		var svc config.Service
		svc.RPC.BindOnIP = o.IP
		if name == "frontend" {
			svc.RPC.GRPCPort = o.FrontendPort
			svc.RPC.HTTPPort = httpPort
		} else {
			p, err := freeport.Pick(o.IP)
			if err != nil {
				return nil, err
			}
			svc.RPC.GRPCPort = p
		}
		conf.Services[name] = svc
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	conf.PublicClient.HostPort = frontend
	return conf, nil
}

// Port names one of Options' ports, for a PortError.
type Port int

const (
	FrontendPort Port = iota
	UIPort
)

func (p Port) String() string {
	if p == UIPort {
		return "UI port"
	}
	return "frontend port"
}

// PortError is a fixed port that cannot be bound; Port says which, so
// the caller can name the setting that moves it.
type PortError struct {
	Port Port
	Addr string
	Err  error
}

func (e *PortError) Error() string { return fmt.Sprintf("temporal %s %s: %v", e.Port, e.Addr, e.Err) }
func (e *PortError) Unwrap() error { return e.Err }

// portOrFree returns port, or a free one when port is 0. A fixed port is
// checked by binding it: the UI server exits the process when it cannot
// bind, and the Temporal server only fails after starting its services.
func portOrFree(ip string, port int, which Port) (int, error) {
	if port == 0 {
		return freeport.Pick(ip)
	}
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return 0, &PortError{Port: which, Addr: addr, Err: err}
	}
	defer l.Close()
	return port, nil
}

// waitFrontend returns once the frontend's workflow service reports it
// serves: the server marks it so once its cluster membership is ready,
// after Start has returned.
func waitFrontend(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	for {
		resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: workflowservice.WorkflowService_ServiceDesc.ServiceName})
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not serving after a minute: %w", cmp.Or(err, ctx.Err()))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func waitHTTP(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
