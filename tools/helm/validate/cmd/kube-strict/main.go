// kube-strict validates rendered Kubernetes manifests offline.
//
// Neither `kubectl apply --dry-run` (it downloads the OpenAPI document from a cluster) nor
// kubeconform (it downloads JSON schemas) works without a network here, so this tool checks
// what can be checked from the Kubernetes Go types alone:
//
//   - every document decodes strictly into its typed object (client-go's scheme, the same
//     API types Kubernetes 1.34 serves): unknown or duplicate fields and wrong types fail;
//   - names, label keys and values, port names and environment variable names are valid;
//   - a Deployment's selector matches its pod template; named probe ports exist;
//   - every Service selects the pods of some Deployment in the set, and its named target
//     ports exist there; every NetworkPolicy and PodDisruptionBudget selects some pods;
//   - no two objects share a kind and name.
//
// Usage: kube-strict FILE... (or - for stdin). Exits 1 on any finding.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

type object struct {
	source string
	obj    runtime.Object
	kind   string
	meta   metav1.Object
}

type podSet struct {
	owner    string
	labels   map[string]string
	template corev1.PodSpec
}

var findings []string

func report(where, format string, args ...any) {
	findings = append(findings, where+": "+fmt.Sprintf(format, args...))
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: kube-strict FILE... (- for stdin)")
		os.Exit(2)
	}
	decoder := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme,
		json.SerializerOptions{Yaml: true, Strict: true})

	var objects []object
	for _, path := range os.Args[1:] {
		objs, err := decodeFile(decoder, path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "kube-strict: %s: %v\n", path, err)
			os.Exit(1)
		}
		objects = append(objects, objs...)
	}

	checkObjects(objects)

	counts := map[string]int{}
	for _, o := range objects {
		counts[o.kind]++
	}
	kindNames := make([]string, 0, len(counts))
	for k := range counts {
		kindNames = append(kindNames, k)
	}
	sort.Strings(kindNames)
	kinds := make([]string, 0, len(counts))
	for _, k := range kindNames {
		kinds = append(kinds, fmt.Sprintf("%d %s", counts[k], k))
	}
	if len(findings) > 0 {
		for _, f := range findings {
			fmt.Println("FAIL " + f)
		}
		fmt.Printf("kube-strict: %d objects, %d findings\n", len(objects), len(findings))
		os.Exit(1)
	}
	fmt.Printf("kube-strict: %d objects valid (%s)\n", len(objects), strings.Join(kinds, ", "))
}

func decodeFile(decoder runtime.Decoder, path string) ([]object, error) {
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var out []object
	for i := 1; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if isEmptyDocument(doc) {
			continue
		}
		where := fmt.Sprintf("%s#%d", path, i)
		obj, gvk, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			report(where, "%v", err)
			continue
		}
		accessor, ok := obj.(metav1.Object)
		if !ok {
			report(where, "%s has no object metadata", gvk.Kind)
			continue
		}
		where = fmt.Sprintf("%s %s/%s", path, gvk.Kind, accessor.GetName())
		out = append(out, object{source: where, obj: obj, kind: gvk.Kind, meta: accessor})
	}
}

// isEmptyDocument: only comments and blank lines (helm emits these for empty templates).
func isEmptyDocument(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' && !bytes.Equal(line, []byte("---")) {
			return false
		}
	}
	return true
}

func checkObjects(objects []object) {
	seen := map[string]string{}
	var pods []podSet
	for _, o := range objects {
		key := o.kind + "/" + o.meta.GetName()
		if prev, dup := seen[key]; dup {
			report(o.source, "duplicate of %s", prev)
		}
		seen[key] = o.source
		checkMeta(o)
		switch v := o.obj.(type) {
		case *appsv1.Deployment:
			checkDeployment(o.source, v)
			pods = append(pods, podSet{o.source, v.Spec.Template.Labels, v.Spec.Template.Spec})
		case *batchv1.Job:
			checkPodSpec(o.source, &v.Spec.Template.Spec)
			pods = append(pods, podSet{o.source, v.Spec.Template.Labels, v.Spec.Template.Spec})
		}
	}
	for _, o := range objects {
		switch v := o.obj.(type) {
		case *corev1.Service:
			checkService(o.source, v, pods)
		case *networkingv1.NetworkPolicy:
			sel, err := metav1.LabelSelectorAsSelector(&v.Spec.PodSelector)
			if err != nil {
				report(o.source, "podSelector: %v", err)
			} else if len(matching(sel, pods)) == 0 {
				report(o.source, "podSelector %s selects no pods of this set", sel)
			}
		case *policyv1.PodDisruptionBudget:
			sel, err := metav1.LabelSelectorAsSelector(v.Spec.Selector)
			if err != nil {
				report(o.source, "selector: %v", err)
			} else if len(matching(sel, pods)) == 0 {
				report(o.source, "selector %s selects no pods of this set", sel)
			}
		}
	}
}

func checkMeta(o object) {
	name := o.meta.GetName()
	var errs []string
	switch o.kind {
	case "Service":
		errs = validation.IsDNS1035Label(name)
	case "Job", "Deployment":
		// Their names end up in pod labels (job-name) or hostnames: keep them to a label.
		errs = validation.IsDNS1123Label(name)
	default:
		errs = validation.IsDNS1123Subdomain(name)
	}
	for _, e := range errs {
		report(o.source, "name %q: %s", name, e)
	}
	checkLabels(o.source, o.meta.GetLabels())
}

func checkLabels(where string, l map[string]string) {
	for k, v := range l {
		for _, e := range validation.IsQualifiedName(k) {
			report(where, "label key %q: %s", k, e)
		}
		for _, e := range validation.IsValidLabelValue(v) {
			report(where, "label %s value %q: %s", k, v, e)
		}
	}
}

func checkDeployment(where string, d *appsv1.Deployment) {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || d.Spec.Selector == nil || len(d.Spec.Selector.MatchLabels)+len(d.Spec.Selector.MatchExpressions) == 0 {
		report(where, "missing or invalid selector: %v", err)
	} else if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		report(where, "selector %s does not match the pod template labels", sel)
	}
	checkLabels(where+" (pod template)", d.Spec.Template.Labels)
	checkPodSpec(where, &d.Spec.Template.Spec)
}

func checkPodSpec(where string, spec *corev1.PodSpec) {
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
	}
	for _, c := range spec.Containers {
		at := where + " container " + c.Name
		if c.Image == "" {
			report(at, "no image")
		}
		ports := map[string]bool{}
		for _, p := range c.Ports {
			if p.Name == "" {
				continue
			}
			for _, e := range validation.IsValidPortName(p.Name) {
				report(at, "port name %q: %s", p.Name, e)
			}
			if ports[p.Name] {
				report(at, "port name %q used twice", p.Name)
			}
			ports[p.Name] = true
		}
		for _, probe := range []*corev1.Probe{c.StartupProbe, c.LivenessProbe, c.ReadinessProbe} {
			if probe == nil {
				continue
			}
			if h := probe.HTTPGet; h != nil && h.Port.Type == intstr.String && !ports[h.Port.StrVal] {
				report(at, "probe uses unknown port %q", h.Port.StrVal)
			}
		}
		env := map[string]bool{}
		for _, e := range c.Env {
			for _, msg := range validation.IsEnvVarName(e.Name) {
				report(at, "env %q: %s", e.Name, msg)
			}
			if env[e.Name] {
				report(at, "env %q set twice", e.Name)
			}
			env[e.Name] = true
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				ref := e.ValueFrom.SecretKeyRef
				if ref.Name == "" || ref.Key == "" {
					report(at, "env %q: secretKeyRef needs a name and a key", e.Name)
				}
			}
		}
		for _, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				report(at, "volumeMount %q has no volume", m.Name)
			}
		}
	}
}

func checkService(where string, s *corev1.Service, pods []podSet) {
	if len(s.Spec.Selector) == 0 {
		return // a selector-less Service (manual Endpoints): nothing to cross-check
	}
	selected := matching(labels.SelectorFromSet(s.Spec.Selector), pods)
	if len(selected) == 0 {
		report(where, "selector %v selects no pods of this set", s.Spec.Selector)
		return
	}
	for _, p := range s.Spec.Ports {
		if p.TargetPort.Type != intstr.String {
			continue
		}
		for _, ps := range selected {
			found := false
			for _, c := range ps.template.Containers {
				for _, cp := range c.Ports {
					found = found || cp.Name == p.TargetPort.StrVal
				}
			}
			if !found {
				report(where, "targetPort %q is not a port of %s", p.TargetPort.StrVal, ps.owner)
			}
		}
	}
}

func matching(sel labels.Selector, pods []podSet) []podSet {
	var out []podSet
	for _, p := range pods {
		if sel.Matches(labels.Set(p.labels)) {
			out = append(out, p)
		}
	}
	return out
}
