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
//
// It also runs plugins written in Node.js (RunPlugin), policy packs above all (`pulumi preview
// --policy-pack <dir>`), again as Pulumi's own host does: the SDK's cmd/run-policy-pack behind the
// SDK's PolicyProxy, which hands the pack its stack's configuration. Not implemented, as not needed
// offline: InstallDependencies (dependencies come from `npm install`), templates, code generation.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pulumi/pulumi/sdk/v3"
	"github.com/pulumi/pulumi/sdk/v3/go/common/apitype"
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

	mu sync.Mutex
	// programs are the Node.js processes running: programs and plugins.
	programs map[*os.Process]struct{}
}

// watchEngine ends the host, and the programs and plugins (policy packs) it runs, when the engine
// that started it is gone: killed (SIGKILL: nothing stops its plugins), the engine leaves the host
// re-parented, and without this the host and its processes would stay alive forever.
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

// findSDKModule looks for @pulumi/pulumi/<module> (a folder with an index.js, as cmd/run) from dir
// upwards, as Node's module resolution would.
func findSDKModule(dir, module string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		candidate := filepath.Join(d, "node_modules", "@pulumi", "pulumi", filepath.FromSlash(module))
		if _, err := os.Stat(filepath.Join(candidate, "index.js")); err == nil {
			return candidate, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("@pulumi/pulumi is not installed in %s or any folder above it: run npm install", dir)
		}
	}
}

// nodeOptions are the runtime options of Pulumi.yaml or PulumiPolicy.yaml (runtime.options), with
// the SDK's defaults.
type nodeOptions struct {
	typescript bool
	tsconfig   string
	// nodeargs are options for node itself (before the script).
	nodeargs []string
}

func parseOptions(info *pulumirpc.ProgramInfo) nodeOptions {
	opts := nodeOptions{typescript: true}
	if info == nil || info.GetOptions() == nil {
		return opts
	}
	m := info.GetOptions().AsMap()
	if v, ok := m["typescript"].(bool); ok {
		opts.typescript = v
	}
	if v, ok := m["tsconfig"].(string); ok {
		opts.tsconfig = v
	}
	if v, ok := m["nodeargs"].(string); ok {
		opts.nodeargs = strings.Fields(v)
	}
	return opts
}

// track records a started Node.js process, for watchEngine to end it; untrack forgets it.
func (h *host) track(p *os.Process) {
	h.mu.Lock()
	h.programs[p] = struct{}{}
	h.mu.Unlock()
}

func (h *host) untrack(p *os.Process) {
	h.mu.Lock()
	delete(h.programs, p)
	h.mu.Unlock()
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

	runner, err := findSDKModule(programDir, "cmd/run")
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
	opts := parseOptions(info)
	env = append(env, fmt.Sprintf("PULUMI_NODEJS_TYPESCRIPT=%t", opts.typescript))
	if opts.tsconfig != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+opts.tsconfig)
	}
	args = append(opts.nodeargs, args...)
	env = withCompileCache(env)
	args = withLazySDK(args)

	cmd := exec.Command("node", args...)
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	cmd.Env = env
	err = cmd.Start()
	if err == nil {
		h.track(cmd.Process)
		err = cmd.Wait()
		h.untrack(cmd.Process)
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

// RunPlugin runs a plugin written in Node.js: the engine asks for it to start a policy pack (a folder
// with PulumiPolicy.yaml `runtime: nodejs`, kind "analyzer", as `pulumi preview --policy-pack <dir>`
// does) or a provider or tool with PulumiPlugin.yaml. As Pulumi's own host does (v3.259.0), it runs
// the SDK's @pulumi/pulumi/cmd/run-policy-pack (the pack's folder as the last argument, the folder as
// working directory) or cmd/run-plugin (the folder first, in the engine's working directory) from the
// plugin's node_modules, with the environment the engine sends, and streams the process's output
// back: the engine reads the plugin's port from its stdout. The stream ends with the process, with
// "Program exited with non-zero exit code: <n>" when it fails.
//
// A policy pack learns its stack (organization, project, stack, dry run, configuration) from the
// environment, which the engine sends only once the plugin runs, in the analyzer's ConfigureStack
// call. So, again as Pulumi's host does, the host first serves the Analyzer service itself (the SDK's
// PolicyProxy, whose port is what the engine reads), starts the pack once ConfigureStack has come,
// with PULUMI_NODEJS_ORGANIZATION, _PROJECT, _STACK, _DRY_RUN and PULUMI_CONFIG set, and forwards
// every later call to the pack's own server.
//
// Beyond Pulumi's host: the runtime option nodeargs go to node (before the script, as for a program;
// Pulumi's host passes them after the script, to the SDK's runner), the compile cache and the
// lazy-sdk.js preload apply as for a program (a pack's process is ended with SIGINT, for lazy-sdk.js
// to write the compile cache), and watchEngine ends the process with the rest.
func (h *host) RunPlugin(req *pulumirpc.RunPluginRequest, server pulumirpc.LanguageRuntime_RunPluginServer) error {
	ctx := server.Context()
	info := req.GetInfo()
	dir := info.GetProgramDirectory()
	analyzer := req.GetKind() == string(apitype.AnalyzerPlugin)

	closer, stdout, stderr, err := rpcutil.MakeRunPluginStreams(server, false)
	if err != nil {
		return err
	}
	defer closer.Close()

	module := "cmd/run-plugin"
	if analyzer {
		module = "cmd/run-policy-pack"
	}
	runner, err := findSDKModule(dir, module)
	if err != nil {
		return err
	}

	opts := parseOptions(info)
	env := req.GetEnv()
	if opts.typescript {
		env = append(env, "PULUMI_NODEJS_TYPESCRIPT=true")
	}
	if opts.tsconfig != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+opts.tsconfig)
	}

	args := append(opts.nodeargs, runner)
	// A policy pack's folder comes last (after the engine's address), any other plugin's first.
	if analyzer {
		args = append(append(args, req.GetArgs()...), dir)
	} else {
		args = append(append(args, dir), req.GetArgs()...)
	}

	var proxy *sdk.PolicyProxy
	if analyzer {
		proxy, stdout, err = sdk.NewPolicyProxy(ctx, stdout)
		if err != nil {
			return fmt.Errorf("could not start policy pack proxy: %w", err)
		}
		config, err := proxy.AwaitConfiguration(ctx)
		if err != nil {
			return fmt.Errorf("could not get stack configuration: %w", err)
		}
		if config != nil {
			add := func(k, v string) {
				if v != "" {
					env = append(env, k+"="+v)
				}
			}
			add("PULUMI_NODEJS_ORGANIZATION", config.GetOrganization())
			add("PULUMI_NODEJS_PROJECT", config.GetProject())
			add("PULUMI_NODEJS_STACK", config.GetStack())
			add("PULUMI_NODEJS_DRY_RUN", strconv.FormatBool(config.GetDryRun()))
			if config.GetConfig() != nil {
				configJSON, err := json.Marshal(config.GetConfig())
				if err != nil {
					return fmt.Errorf("could not marshal stack configuration: %w", err)
				}
				add("PULUMI_CONFIG", string(configJSON))
			}
		}
	}

	// The process ends with the stream (when the engine ends the plugin, or the engine is gone) as the
	// engine ends a plugin it runs itself: SIGINT, then SIGKILL after 5 s. (Pulumi's host kills it
	// at once; a SIGINT lets lazy-sdk.js write the compile cache first.)
	cmd := exec.CommandContext(ctx, "node", withLazySDK(args)...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Dir = req.GetPwd()
	if analyzer {
		// Policy packs have always run in their own folder.
		cmd.Dir = dir
	}
	cmd.Env = withCompileCache(env)
	cmd.Stdout, cmd.Stderr = stdout, stderr

	if err := cmd.Start(); err != nil {
		return fmt.Errorf("Problem executing plugin program (could not run language executor): %w", err)
	}
	h.track(cmd.Process)
	if proxy != nil {
		// Reads the pack's port from its stdout, connects, forwards the stack configuration, and
		// returns when the process has ended (it waits for it).
		err = proxy.Attach(ctx, cmd)
	} else {
		err = cmd.Wait()
	}
	h.untrack(cmd.Process)
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return fmt.Errorf("Program exited with non-zero exit code: %d", exitErr.ExitCode())
		}
		return err
	}
	return closer.Close()
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
