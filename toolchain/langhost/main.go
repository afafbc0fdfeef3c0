// Command pulumi-language-nodejs is this project's Node.js language host for the Pulumi engine.
//
// Pulumi's own host lives in a Go module (sdk/nodejs/cmd/pulumi-language-nodejs/v3) that the Go module
// proxy reachable from our machines does not serve, so we build this small host from the Pulumi SDK
// module at the same version as the CLI. It implements the part of the LanguageRuntime gRPC service
// that the engine needs to run a Node.js program: it starts `@pulumi/pulumi/cmd/run` (the SDK's own
// program runner, from the program's node_modules) with the monitor and engine addresses, the stack
// configuration and the TypeScript settings, exactly as the SDK expects them. Everything that
// happens inside the program (resource registration, closure serialization of dynamic providers) is
// the SDK's own code; everything around it (planning, diffs, state, secrets) is the real engine.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
)

// exitCodeAlreadyReported is the runner's exit code after it has reported an error to the engine.
const exitCodeAlreadyReported = 32

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer
	engineAddress string

	mu       sync.Mutex
	programs map[*os.Process]struct{}
}

// watchEngine ends the host, and the programs it runs, when the engine that started it is gone:
// killed (SIGKILL: nothing stops its plugins), the engine leaves the host re-parented, and without
// this the host and its program would stay alive forever.
func (h *host) watchEngine() {
	parent := os.Getppid()
	for range time.Tick(500 * time.Millisecond) {
		if os.Getppid() == parent {
			continue
		}
		h.mu.Lock()
		for p := range h.programs {
			_ = p.Kill()
		}
		h.mu.Unlock()
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: the Pulumi engine (process %d) is gone: exiting\n", parent)
		os.Exit(1)
	}
}

func main() {
	h := &host{programs: map[*os.Process]struct{}{}}
	go h.watchEngine()
	// The engine passes flags (-root=..., -tracing=...) and then the engine's address.
	for _, arg := range os.Args[1:] {
		if !strings.HasPrefix(arg, "-") {
			h.engineAddress = arg
		}
	}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, h)
			return nil
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: could not start the RPC server: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: RPC server stopped: %v\n", err)
		os.Exit(1)
	}
}

func (h *host) Handshake(_ context.Context, req *pulumirpc.LanguageHandshakeRequest) (*pulumirpc.LanguageHandshakeResponse, error) {
	if req.GetEngineAddress() != "" {
		h.engineAddress = req.GetEngineAddress()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

// Plugins are not acquired automatically in our setups; the dynamic-provider plugin is on PATH.
func (h *host) GetRequiredPlugins(context.Context, *pulumirpc.GetRequiredPluginsRequest) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *host) GetRequiredPackages(context.Context, *pulumirpc.GetRequiredPackagesRequest) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *host) GetProgramDependencies(context.Context, *pulumirpc.GetProgramDependenciesRequest) (*pulumirpc.GetProgramDependenciesResponse, error) {
	return &pulumirpc.GetProgramDependenciesResponse{}, nil
}

func (h *host) About(context.Context, *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("node --version: %w", err)
	}
	return &pulumirpc.AboutResponse{Executable: "node", Version: strings.TrimSpace(string(out))}, nil
}

// findRunner looks for @pulumi/pulumi/cmd/run from dir upwards, as Node's module resolution would.
func findRunner(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		candidate := filepath.Join(d, "node_modules", "@pulumi", "pulumi", "cmd", "run")
		if _, err := os.Stat(filepath.Join(candidate, "index.js")); err == nil {
			return candidate, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("@pulumi/pulumi is not installed in %s or any folder above it: run npm install", dir)
		}
	}
}

func (h *host) Run(_ context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	programDir := req.GetPwd()
	entry := req.GetProgram()
	if info != nil && info.GetProgramDirectory() != "" {
		programDir = info.GetProgramDirectory()
		entry = info.GetEntryPoint()
	}
	pwd := req.GetPwd()
	if entry == "" || entry == "." {
		// "." lets the runner pick the entry point from package.json, relative to the program directory.
		entry, pwd = ".", programDir
	} else if !filepath.IsAbs(entry) {
		entry = filepath.Join(programDir, entry)
	}

	runner, err := findRunner(programDir)
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	args := []string{runner}
	add := func(flag, value string) {
		if value != "" {
			args = append(args, "--"+flag, value)
		}
	}
	add("monitor", req.GetMonitorAddress())
	add("engine", h.engineAddress)
	add("organization", req.GetOrganization())
	add("project", req.GetProject())
	add("stack", req.GetStack())
	add("pwd", pwd)
	if info != nil {
		add("root-directory", info.GetRootDirectory())
	}
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	add("parallel", fmt.Sprint(req.GetParallel()))
	args = append(args, entry)
	args = append(args, req.GetArgs()...)

	// As Pulumi's own host does: an object and a list even when the stack has no configuration
	// (a nil map or slice would marshal as `null`, which the SDK cannot read).
	configMap := req.GetConfig()
	if configMap == nil {
		configMap = map[string]string{}
	}
	config, err := json.Marshal(configMap)
	if err != nil {
		return nil, fmt.Errorf("serializing configuration: %w", err)
	}
	secretKeyList := req.GetConfigSecretKeys()
	if secretKeyList == nil {
		secretKeyList = []string{}
	}
	secretKeys, err := json.Marshal(secretKeyList)
	if err != nil {
		return nil, fmt.Errorf("serializing secret configuration keys: %w", err)
	}
	env := append(os.Environ(),
		"PULUMI_CONFIG="+string(config),
		"PULUMI_CONFIG_SECRET_KEYS="+string(secretKeys),
	)
	// Runtime options from Pulumi.yaml (runtime.options), with the SDK's defaults.
	typescript := true
	if info != nil && info.GetOptions() != nil {
		opts := info.GetOptions().AsMap()
		if v, ok := opts["typescript"].(bool); ok {
			typescript = v
		}
		if v, ok := opts["tsconfig"].(string); ok && v != "" {
			env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+v)
		}
		if v, ok := opts["nodeargs"].(string); ok && v != "" {
			args = append(strings.Fields(v), args...)
		}
	}
	env = append(env, fmt.Sprintf("PULUMI_NODEJS_TYPESCRIPT=%t", typescript))
	env = withCompileCache(env)
	args = withLazySDK(args)

	cmd := exec.Command("node", args...)
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	cmd.Env = env
	err = cmd.Start()
	if err == nil {
		h.mu.Lock()
		h.programs[cmd.Process] = struct{}{}
		h.mu.Unlock()
		err = cmd.Wait()
		h.mu.Lock()
		delete(h.programs, cmd.Process)
		h.mu.Unlock()
	}
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if exitErr.ExitCode() == exitCodeAlreadyReported {
				return &pulumirpc.RunResponse{Bail: true}, nil
			}
			return &pulumirpc.RunResponse{Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exitErr.ExitCode())}, nil
		}
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("could not run node: %v", err)}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}

// withCompileCache turns on Node.js's module compile cache (Node >= 22.1) for the program, in the
// folder Node's own module.enableCompileCache() uses, unless the environment already says where
// (NODE_COMPILE_CACHE) or says not to (NODE_DISABLE_COMPILE_CACHE, which Node honours over it).
// Every run loads @pulumi/pulumi and its gRPC stack anew: with the cache that takes about half the
// time (0.46 s instead of 0.83 s on a 2-core machine). The dynamic-provider plugin script uses the
// same folder (and lazy-sdk.js writes the cache when the engine ends that process).
func withCompileCache(env []string) []string {
	if os.Getenv("NODE_COMPILE_CACHE") != "" {
		return env
	}
	return append(env, "NODE_COMPILE_CACHE="+filepath.Join(os.TempDir(), "node-compile-cache"))
}

// withLazySDK preloads lazy-sdk.js (kept next to this binary) into the program: @pulumi/pulumi loads
// its closure serializer and OpenTelemetry's SDK on every start (about 0.75 s without the compile
// cache), which a program needs only when it serializes a function or traces; the preload loads
// them on first use instead. Without the file, node runs as before.
func withLazySDK(args []string) []string {
	self, err := os.Executable()
	if err != nil {
		return args
	}
	preload := filepath.Join(filepath.Dir(self), "lazy-sdk.js")
	if _, err := os.Stat(preload); err != nil {
		return args
	}
	return append([]string{"--require", preload}, args...)
}
