// compose-check validates deploy/compose.yaml offline, without a Docker engine:
//
//   - loads it with compose-go, the loader `docker compose` itself uses (Compose
//     specification schema, interpolation, YAML merge keys);
//   - checks it against the chart's description of the mesh (helm/recur/values.yaml): every
//     app is a service built from deploy/Dockerfile with APP=<app>, has the runtime contract's
//     environment, gets exactly the <PEER>_GRPC_ADDR variables of the peers it calls (and
//     waits for them), runs with the chart's hardening, and its database is created by the
//     PostgreSQL init script.
//
// Usage: compose-check COMPOSE_FILE CHART_VALUES INIT_SQL
package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"sigs.k8s.io/yaml"
)

type chartValues struct {
	Ports struct {
		GRPC    int `json:"grpc"`
		Metrics int `json:"metrics"`
		HTTP    int `json:"http"`
	} `json:"ports"`
	Apps map[string]struct {
		Enabled bool     `json:"enabled"`
		Server  string   `json:"server"`
		Calls   []string `json:"calls"`
	} `json:"apps"`
}

var findings []string

func report(where, format string, args ...any) {
	findings = append(findings, where+": "+fmt.Sprintf(format, args...))
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: compose-check COMPOSE_FILE CHART_VALUES INIT_SQL")
		os.Exit(2)
	}
	composeFile, valuesFile, initSQL := os.Args[1], os.Args[2], os.Args[3]

	// No OS environment: the file's own defaults (${VAR:-default}) are what is checked.
	opts, err := cli.NewProjectOptions([]string{composeFile},
		cli.WithWorkingDirectory(filepath.Dir(composeFile)), cli.WithEnv(nil))
	if err == nil {
		var project *types.Project
		project, err = opts.LoadProject(context.Background())
		if err == nil {
			checkProject(project, readValues(valuesFile), readDatabases(initSQL))
		}
	}
	if err != nil {
		fmt.Printf("FAIL %s: %v\n", composeFile, err)
		os.Exit(1)
	}
	if len(findings) > 0 {
		for _, f := range findings {
			fmt.Println("FAIL " + f)
		}
		fmt.Printf("compose-check: %d findings\n", len(findings))
		os.Exit(1)
	}
	fmt.Printf("compose-check: %s is valid and matches the chart's mesh\n", composeFile)
}

func readValues(path string) chartValues {
	var v chartValues
	data, err := os.ReadFile(path)
	if err == nil {
		err = yaml.Unmarshal(data, &v)
	}
	if err != nil {
		fmt.Printf("FAIL %s: %v\n", path, err)
		os.Exit(1)
	}
	return v
}

func readDatabases(path string) map[string]bool {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Printf("FAIL %s: %v\n", path, err)
		os.Exit(1)
	}
	dbs := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?i)CREATE DATABASE\s+"?([a-z0-9_]+)"?`).FindAllStringSubmatch(string(data), -1) {
		dbs[m[1]] = true
	}
	return dbs
}

func peerVar(app string) string {
	return strings.ToUpper(strings.ReplaceAll(app, "-", "_")) + "_GRPC_ADDR"
}

// callsBack reports whether app `peer` calls app `name` in turn.
func callsBack(v chartValues, peer, name string) bool {
	for _, callee := range v.Apps[peer].Calls {
		if callee == name {
			return true
		}
	}
	return false
}

func checkProject(p *types.Project, v chartValues, databases map[string]bool) {
	seenDB := map[string]string{}
	names := make([]string, 0, len(v.Apps))
	for name := range v.Apps {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		app := v.Apps[name]
		if !app.Enabled {
			continue
		}
		where := "service " + name
		svc, ok := p.Services[name]
		if !ok {
			report(where, "missing (the chart deploys app %q)", name)
			continue
		}
		env := map[string]string{}
		for k, val := range svc.Environment {
			if val != nil {
				env[k] = *val
			}
		}
		expect := func(key, want string) {
			if got, ok := env[key]; !ok {
				report(where, "environment lacks %s", key)
			} else if want != "" && got != want {
				report(where, "%s=%q, want %q", key, got, want)
			}
		}

		// Image and build.
		if svc.Build == nil {
			report(where, "not built from deploy/Dockerfile")
		} else {
			if filepath.Base(svc.Build.Dockerfile) != "Dockerfile" || filepath.Base(filepath.Dir(svc.Build.Dockerfile)) != "deploy" {
				report(where, "build.dockerfile %q, want deploy/Dockerfile", svc.Build.Dockerfile)
			}
			if a := svc.Build.Args["APP"]; a == nil || *a != name {
				report(where, "build arg APP must be %q", name)
			}
		}

		// The runtime contract.
		expect("KAFKA_BROKERS", "")
		expect("LOG_LEVEL", "")
		expect("DATABASE_URL", "")
		if u, err := url.Parse(env["DATABASE_URL"]); err == nil && env["DATABASE_URL"] != "" {
			db := strings.TrimPrefix(u.Path, "/")
			if !databases[db] {
				report(where, "database %q is not created by the init script", db)
			}
			if other, dup := seenDB[db]; dup {
				report(where, "shares database %q with %s (one database per app)", db, other)
			}
			seenDB[db] = name
		}
		switch app.Server {
		case "grpc":
			expect("GRPC_PORT", fmt.Sprint(v.Ports.GRPC))
			expect("METRICS_PORT", fmt.Sprint(v.Ports.Metrics))
		case "http":
			expect("HTTP_PORT", fmt.Sprint(v.Ports.HTTP))
			expect("RECUR_OPERATOR_TOKEN", "")
		}

		// Peers: exactly the ones the chart says this app calls.
		want := map[string]bool{}
		for _, peer := range app.Calls {
			want[peerVar(peer)] = true
			expect(peerVar(peer), fmt.Sprintf("%s:%d", peer, v.Ports.GRPC))
			// Two apps that call each other cannot both depend_on the other (Compose refuses the
			// cycle); their gRPC clients wait for the peer to be ready, so one direction is enough.
			if _, ok := svc.DependsOn[peer]; !ok && !callsBack(v, peer, name) {
				report(where, "calls %s but does not depend_on it", peer)
			}
		}
		for k := range env {
			if strings.HasSuffix(k, "_GRPC_ADDR") && !want[k] {
				report(where, "sets %s but the chart says it does not call that service", k)
			}
		}
		for _, infra := range []string{"postgres", "kafka"} {
			if d, ok := svc.DependsOn[infra]; !ok || d.Condition != types.ServiceConditionHealthy {
				report(where, "must depend_on %s with condition service_healthy", infra)
			}
		}

		// Hardening, as in the chart.
		if !svc.ReadOnly {
			report(where, "read_only must be true")
		}
		if len(svc.CapDrop) != 1 || svc.CapDrop[0] != "ALL" {
			report(where, "cap_drop must be [ALL]")
		}
		if svc.User != "" && (svc.User == "root" || svc.User == "0") {
			report(where, "must not run as root")
		}
	}
}
