package helm_test

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8sjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/assent-hq/assent/internal/config"
	assent "github.com/assent-hq/assent/sdk/go"
)

const chartDir = "assent"

// minimal is the default values plus the one value without a default.
const minimal = `baseURL: https://assent.example.com`

// full sets every value the chart has, with mTLS to Temporal.
const full = `
baseURL: https://assent.example.com
image: {repository: registry.example.com/assent, tag: "2026.07.1", pullPolicy: Always}
imagePullSecrets: [{name: registry}]
secretKey: {secretName: assent-keys, key: ring}
postgres: {url: {secretName: assent-db, key: url}}
temporal:
  address: frontend.temporal.internal:7233
  namespace: assent-prod
  tls:
    clientCertSecretName: assent-temporal-client
    ca: {secretName: assent-temporal-ca, key: ca.pem}
    serverName: frontend.temporal.internal
blob:
  url: s3://assent-reports?region=eu-west-1
  credentials: {secretName: assent-s3, accessKeyIDKey: id, secretAccessKeyKey: secret}
reportsDomain: reports.example.com
trustedProxies: 10.0.0.0/8
receiverNetworks: 10.20.0.0/16
operators: ops@example.com
temporalUIURL: https://temporal.example.com
logLevel: debug
smtp:
  host: smtp.example.com
  port: 465
  tls: tls
  from: Assent <assent@example.com>
  username: assent
  password: {secretName: assent-smtp, key: password}
oidc:
  issuer: https://login.example.com
  clientID: assent
  label: Sign in with Example
  clientSecret: {secretName: assent-oidc, key: secret}
metrics:
  port: 9100
  token: {secretName: assent-metrics, key: token}
  serviceMonitor: {enabled: true, interval: 15s, scrapeTimeout: 5s, labels: {release: prometheus}}
extraEnv:
  - {name: OTEL_EXPORTER_OTLP_ENDPOINT, value: "http://otel-collector:4318"}
serve:
  replicas: 3
  port: 8000
  resources: {requests: {cpu: "1", memory: 768Mi}, limits: {memory: 1536Mi}}
  terminationGracePeriodSeconds: 60
worker:
  replicas: 4
  probePort: 8091
  resources: {requests: {cpu: 500m, memory: 640Mi}, limits: {memory: 1Gi}}
migrate: {activeDeadlineSeconds: 300, backoffLimit: 1, resources: {requests: {cpu: 50m, memory: 64Mi}}}
service: {type: ClusterIP, port: 8080, annotations: {example.com/owner: platform}}
ingress:
  enabled: true
  className: nginx
  annotations: {nginx.ingress.kubernetes.io/proxy-body-size: 110m}
  tls: {enabled: true, secretName: assent-tls, reportsSecretName: assent-reports-tls}
podDisruptionBudget: {enabled: true, maxUnavailable: 1}
networkPolicy:
  enabled: true
  ingressFrom: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ingress-nginx}}}]
  metricsFrom: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}, podSelector: {matchLabels: {app: prometheus}}}]
  probesFrom: [{ipBlock: {cidr: 10.0.0.0/16}}]
serviceAccountName: assent
podAnnotations: {example.com/team: platform}
podLabels: {example.com/tier: app}
nodeSelector: {kubernetes.io/os: linux}
tolerations: [{key: dedicated, operator: Equal, value: assent, effect: NoSchedule}]
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector: {matchLabels: {app.kubernetes.io/name: assent}}
topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app.kubernetes.io/name: assent}}}
`

// apiKey reaches Temporal Cloud with an API key instead.
const apiKey = `
baseURL: https://assent.example.com/
temporal:
  address: eu-west-1.aws.api.temporal.io:7233
  namespace: assent-prod.a1b2c
  apiKey: {secretName: assent-temporal, key: api-key}
`

// objects is one render, every object strictly decoded into its type.
type objects struct {
	values      chartutil.Values
	text        string
	hooks       []*release.Hook
	deployments map[string]*appsv1.Deployment
	jobs        map[string]*batchv1.Job
	services    map[string]*corev1.Service
	ingresses   []*networkingv1.Ingress
	pdbs        []*policyv1.PodDisruptionBudget
	monitors    []*monitoringv1.ServiceMonitor
	policies    []*networkingv1.NetworkPolicy
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir)
	require.NoError(t, err)
	return c
}

// renderValues renders the chart as `helm install assent` would, with
// Helm's engine in strict mode (a template naming a value that does not
// exist fails) and the chart's values schema.
func renderValues(t *testing.T, valuesYAML string) (map[string]string, chartutil.Values, error) {
	t.Helper()
	c := loadChart(t)
	vals, err := chartutil.ReadValues([]byte(valuesYAML))
	require.NoError(t, err)
	caps := chartutil.DefaultCapabilities.Copy()
	// A version the chart's kubeVersion admits, as helm install checks.
	kv, err := chartutil.ParseKubeVersion("v1.33.0")
	require.NoError(t, err)
	require.True(t, chartutil.IsCompatibleRange(c.Metadata.KubeVersion, kv.Version), "kubeVersion %s", c.Metadata.KubeVersion)
	caps.KubeVersion = *kv
	top, err := chartutil.ToRenderValues(c, vals, chartutil.ReleaseOptions{Name: "assent", Namespace: "assent", IsInstall: true, Revision: 1}, caps)
	if err != nil {
		return nil, nil, err
	}
	files, err := engine.Engine{Strict: true}.Render(c, top)
	if err != nil {
		return nil, nil, err
	}
	merged, err := top.Table("Values")
	require.NoError(t, err)
	return files, merged, nil
}

func render(t *testing.T, valuesYAML string) *objects {
	t.Helper()
	files, vals, err := renderValues(t, valuesYAML)
	require.NoError(t, err)
	_, hasNotes := files["assent/templates/NOTES.txt"]
	assert.True(t, hasNotes)
	delete(files, "assent/templates/NOTES.txt")
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	require.NoError(t, err)

	o := &objects{values: vals, hooks: hooks, deployments: map[string]*appsv1.Deployment{},
		jobs: map[string]*batchv1.Job{}, services: map[string]*corev1.Service{}}
	var all bytes.Buffer
	docs := make([]string, 0, len(manifests)+len(hooks))
	for _, m := range manifests {
		docs = append(docs, m.Content)
	}
	for _, h := range hooks {
		docs = append(docs, h.Manifest)
	}
	for _, doc := range docs {
		all.WriteString(doc + "\n---\n")
		var head struct{ APIVersion, Kind string }
		require.NoError(t, yaml.Unmarshal([]byte(doc), &head))
		switch head.APIVersion + " " + head.Kind {
		case "apps/v1 Deployment":
			d := decode[appsv1.Deployment](t, doc)
			o.deployments[d.Name] = d
		case "batch/v1 Job":
			j := decode[batchv1.Job](t, doc)
			o.jobs[j.Name] = j
		case "v1 Service":
			s := decode[corev1.Service](t, doc)
			o.services[s.Name] = s
		case "networking.k8s.io/v1 Ingress":
			o.ingresses = append(o.ingresses, decode[networkingv1.Ingress](t, doc))
		case "policy/v1 PodDisruptionBudget":
			o.pdbs = append(o.pdbs, decode[policyv1.PodDisruptionBudget](t, doc))
		case "monitoring.coreos.com/v1 ServiceMonitor":
			o.monitors = append(o.monitors, decode[monitoringv1.ServiceMonitor](t, doc))
		case "networking.k8s.io/v1 NetworkPolicy":
			o.policies = append(o.policies, decode[networkingv1.NetworkPolicy](t, doc))
		default:
			t.Errorf("the chart renders a %s %s, which this test does not check", head.APIVersion, head.Kind)
		}
	}
	o.text = all.String()
	return o
}

// decode reads one manifest into T as the API server would with
// fieldValidation=Strict: a field T does not have, a field of the wrong
// case or a duplicate fails.
func decode[T any](t *testing.T, doc string) *T {
	t.Helper()
	j, err := yaml.YAMLToJSONStrict([]byte(doc))
	require.NoError(t, err, "%s", doc)
	v := new(T)
	strict, err := k8sjson.UnmarshalStrict(j, v, k8sjson.DisallowDuplicateFields, k8sjson.DisallowUnknownFields)
	require.NoError(t, err, "%s", doc)
	require.Empty(t, strict, "%T has no such field:\n%s", v, doc)
	return v
}

func str(v chartutil.Values, path string) string {
	x, err := v.PathValue(path)
	if err != nil {
		return ""
	}
	return fmt.Sprint(x)
}

// reads says whether the binary's subcommand cmd reads setting s.
func reads(s config.Setting, cmd string) bool { return slices.Contains(s.UsedBy, cmd) }

// notSettings are variables the chart sets that the binary does not list
// as its own: the S3 credentials, read by the blob store's AWS SDK, which
// ASSENT_BLOB_URL's doc names.
var notSettings = []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}

// secrets are the variables whose values are secrets: only ever from a
// Secret, never written in a manifest.
var secrets = []string{"ASSENT_SECRET_KEY", "ASSENT_DATABASE_URL", "ASSENT_TEMPORAL_API_KEY", "ASSENT_SMTP_PASSWORD",
	"ASSENT_METRICS_TOKEN", "ASSENT_OIDC_CLIENT_SECRET", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}

func setting(name string) (config.Setting, bool) {
	for _, s := range config.Settings {
		if s.Env == name {
			return s, true
		}
	}
	return config.Setting{}, false
}

// TestSettingsTheChartLeansOn: what the test takes from the binary's
// settings still holds there, so the lists above cannot go stale.
func TestSettingsTheChartLeansOn(t *testing.T) {
	blob, ok := setting("ASSENT_BLOB_URL")
	require.True(t, ok)
	for _, name := range notSettings {
		_, isSetting := setting(name)
		assert.False(t, isSetting, "%s is a setting now: drop it from notSettings", name)
		assert.Contains(t, blob.Doc, name, "ASSENT_BLOB_URL no longer reads %s", name)
	}
	for _, s := range config.Settings {
		if strings.Contains(s.Doc, "out of the process list") {
			assert.Contains(t, secrets, s.Env, "%s is kept out of the process list, so it is a secret the chart must take from a Secret", s.Env)
		}
	}
	for _, name := range secrets {
		if !slices.Contains(notSettings, name) {
			_, ok := setting(name)
			assert.True(t, ok, "%s is not a setting", name)
		}
	}
	assert.True(t, reads(mustSetting(t, "ASSENT_TEMPORAL_NAMESPACE"), "worker"))
	assert.False(t, reads(mustSetting(t, "ASSENT_TEMPORAL_NAMESPACE"), "migrate"))
	assert.False(t, reads(mustSetting(t, "ASSENT_DEV_ALLOW_LOOPBACK"), "serve"))
	assert.True(t, reads(mustSetting(t, "ASSENT_SECRET_KEY"), "migrate"))
	assert.False(t, reads(mustSetting(t, "ASSENT_HTTP_ADDR"), "worker"))
}

func mustSetting(t *testing.T, name string) config.Setting {
	s, ok := setting(name)
	require.True(t, ok, name)
	return s
}

func TestChartRenders(t *testing.T) {
	for name, values := range map[string]string{"defaults": minimal, "full": full, "api key": apiKey} {
		t.Run(name, func(t *testing.T) {
			o := render(t, values)
			checkWorkloads(t, o)
			checkServices(t, o)
			checkIngress(t, o)
			checkPDBs(t, o)
			checkServiceMonitor(t, o)
			checkNetworkPolicies(t, o)
			checkNoSecretValues(t, o)
		})
	}
}

// commands are the Deployments and the Job by the subcommand they run.
func commands(t *testing.T, o *objects) map[string]*corev1.PodTemplateSpec {
	t.Helper()
	require.Len(t, o.deployments, 2)
	require.Len(t, o.jobs, 1)
	pods := map[string]*corev1.PodTemplateSpec{}
	for _, d := range o.deployments {
		sel, err := metav1Selector(d.Spec.Selector)
		require.NoError(t, err)
		assert.True(t, sel.Matches(labels.Set(d.Spec.Template.Labels)), "%s's selector does not select its own pods", d.Name)
		require.Len(t, d.Spec.Template.Spec.Containers, 1)
		pods[d.Spec.Template.Spec.Containers[0].Args[0]] = &d.Spec.Template
	}
	for _, j := range o.jobs {
		require.Len(t, j.Spec.Template.Spec.Containers, 1)
		pods[j.Spec.Template.Spec.Containers[0].Args[0]] = &j.Spec.Template
	}
	require.ElementsMatch(t, []string{"serve", "worker", "migrate"}, keys(pods))
	return pods
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func envOf(c corev1.Container) map[string]corev1.EnvVar {
	m := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		m[e.Name] = e
	}
	return m
}

// portOf is the container port an address (host:port) listens on.
func portOf(t *testing.T, c corev1.Container, addr string) corev1.ContainerPort {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	require.NoError(t, err, addr)
	for _, cp := range c.Ports {
		if fmt.Sprint(cp.ContainerPort) == p {
			return cp
		}
	}
	t.Fatalf("%s listens on %s, which is no port of the container's %v", c.Name, addr, c.Ports)
	return corev1.ContainerPort{}
}

func checkWorkloads(t *testing.T, o *objects) {
	pods := commands(t, o)
	image := str(o.values, "image.repository") + ":" + str(o.values, "image.tag")
	if str(o.values, "image.tag") == "" {
		image = str(o.values, "image.repository") + ":" + loadChart(t).Metadata.AppVersion
	}
	for cmd, pod := range pods {
		spec := pod.Spec
		c := spec.Containers[0]
		env := envOf(c)
		t.Run(cmd, func(t *testing.T) {
			assert.Equal(t, []string{cmd}, c.Args, "runs the image's entrypoint (assent) with the subcommand")
			assert.Empty(t, c.Command, "the image's entrypoint runs")
			assert.Equal(t, image, c.Image)

			// Every variable is one the binary reads, in this subcommand;
			// none is set twice.
			var twice []string
			for i, e := range c.Env {
				if slices.ContainsFunc(c.Env[:i], func(f corev1.EnvVar) bool { return f.Name == e.Name }) {
					twice = append(twice, e.Name)
				}
			}
			assert.Empty(t, twice, "set twice")
			for name := range env {
				if slices.Contains(notSettings, name) {
					assert.Equal(t, "serve", cmd, "%s: only serve keeps report files", name)
					continue
				}
				s, ok := setting(name)
				if assert.True(t, ok, "%s sets %s, which is not one of the binary's settings (internal/config.Settings)", cmd, name) {
					assert.True(t, reads(s, cmd), "%s sets %s, which only %s reads", cmd, name, s.UsedBy)
				}
			}
			required := []string{"ASSENT_DATABASE_URL", "ASSENT_SECRET_KEY", "ASSENT_DATA_DIR"}
			if cmd != "migrate" {
				required = append(required, "ASSENT_BASE_URL", "ASSENT_TEMPORAL_ADDRESS", "ASSENT_TEMPORAL_NAMESPACE", "ASSENT_METRICS_ADDR")
			}
			for _, name := range required {
				assert.Contains(t, env, name)
			}
			if cmd != "migrate" {
				assert.Equal(t, str(o.values, "baseURL"), env["ASSENT_BASE_URL"].Value)
				assert.Equal(t, str(o.values, "temporal.namespace"), env["ASSENT_TEMPORAL_NAMESPACE"].Value)
				assert.Equal(t, str(o.values, "temporal.address"), env["ASSENT_TEMPORAL_ADDRESS"].Value)
				checkTemporalTLS(t, o, spec, c)
			}

			// Non-root, read-only, nothing more.
			psc := spec.SecurityContext
			require.NotNil(t, psc)
			assert.Equal(t, ptr(true), psc.RunAsNonRoot)
			assert.Equal(t, ptr(int64(10001)), psc.RunAsUser, "the Dockerfile's user")
			require.NotNil(t, psc.SeccompProfile)
			assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, psc.SeccompProfile.Type)
			sc := c.SecurityContext
			require.NotNil(t, sc)
			assert.Equal(t, ptr(true), sc.ReadOnlyRootFilesystem)
			assert.Equal(t, ptr(false), sc.AllowPrivilegeEscalation)
			require.NotNil(t, sc.Capabilities)
			assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
			assert.Equal(t, ptr(false), spec.AutomountServiceAccountToken)
			assert.Equal(t, ptr(false), spec.EnableServiceLinks, "no variables but the chart's (a Service assent-smtp would set ASSENT_SMTP_PORT)")
			assert.False(t, c.Resources.Requests.Memory().IsZero(), "memory requested")
			assert.False(t, c.Resources.Requests.Cpu().IsZero(), "CPU requested")

			// The data dir and /tmp are writable volumes; every mount is
			// of a volume the pod has.
			volumes := map[string]corev1.Volume{}
			for _, v := range spec.Volumes {
				volumes[v.Name] = v
			}
			mounts := map[string]corev1.VolumeMount{}
			for _, m := range c.VolumeMounts {
				assert.Contains(t, volumes, m.Name)
				mounts[m.MountPath] = m
			}
			for _, dir := range []string{env["ASSENT_DATA_DIR"].Value, "/tmp"} {
				if assert.Contains(t, mounts, dir, "%s is written to", dir) {
					assert.False(t, mounts[dir].ReadOnly)
					assert.NotNil(t, volumes[mounts[dir].Name].EmptyDir)
				}
			}

			checkProbes(t, cmd, c, env)
			if cmd != "migrate" {
				metrics := portOf(t, c, env["ASSENT_METRICS_ADDR"].Value)
				assert.Equal(t, "metrics", metrics.Name, "the metrics Service reaches it by name")
				assert.Equal(t, str(o.values, "metrics.port"), fmt.Sprint(metrics.ContainerPort))
			} else {
				for _, p := range c.Ports {
					assert.NotEqual(t, "metrics", p.Name, "migrate has no metrics port for the metrics Service to find")
				}
			}
		})
	}

	// Helm runs migrate as a hook before an install's or upgrade's
	// objects, and only it.
	require.Len(t, o.hooks, 1)
	h := o.hooks[0]
	assert.Equal(t, "Job", h.Kind)
	assert.ElementsMatch(t, []release.HookEvent{release.HookPreInstall, release.HookPreUpgrade}, h.Events)
	assert.ElementsMatch(t, []release.HookDeletePolicy{release.HookBeforeHookCreation, release.HookSucceeded}, h.DeletePolicies)
	job := o.jobs[h.Name]
	require.NotNil(t, job)
	assert.Equal(t, corev1.RestartPolicyNever, job.Spec.Template.Spec.RestartPolicy)
	assert.NotNil(t, job.Spec.ActiveDeadlineSeconds, "a hung migration ends")
	assert.NotNil(t, job.Spec.BackoffLimit)
}

// checkProbes: serve and worker are probed on /healthz (liveness, startup)
// and /readyz (readiness), at the port their address setting listens on;
// the paths are the ones they serve (api.Probes and the API's router).
func checkProbes(t *testing.T, cmd string, c corev1.Container, env map[string]corev1.EnvVar) {
	if cmd == "migrate" {
		assert.Nil(t, c.LivenessProbe)
		assert.Nil(t, c.ReadinessProbe)
		return
	}
	addr := map[string]string{"serve": "ASSENT_HTTP_ADDR", "worker": "ASSENT_WORKER_HTTP_ADDR"}[cmd]
	require.Contains(t, env, addr)
	port := portOf(t, c, env[addr].Value)
	assert.NotEqual(t, "metrics", port.Name)
	for probe, want := range map[string]*struct {
		p    *corev1.Probe
		path string
	}{
		"liveness":  {c.LivenessProbe, "/healthz"},
		"readiness": {c.ReadinessProbe, "/readyz"},
		"startup":   {c.StartupProbe, "/healthz"},
	} {
		require.NotNil(t, want.p, "%s probe", probe)
		g := want.p.HTTPGet
		require.NotNil(t, g, "%s probe is an HTTP GET", probe)
		assert.Equal(t, want.path, g.Path, "%s probe", probe)
		assert.Equal(t, intstr.FromString(port.Name), g.Port, "%s probe goes to %s's port", probe, addr)
		assert.Empty(t, g.Host, "%s probe: the pod's own address", probe)
	}
	assert.Equal(t, "0.0.0.0", strings.Split(env[addr].Value, ":")[0], "the kubelet reaches the pod's address, not loopback")
}

// checkTemporalTLS: each TLS file setting names a file the pod mounts
// from the Secret the values name.
func checkTemporalTLS(t *testing.T, o *objects, spec corev1.PodSpec, c corev1.Container) {
	env := envOf(c)
	files := map[string]string{} // path in the container -> secret/key
	for _, m := range c.VolumeMounts {
		for _, v := range spec.Volumes {
			if v.Name != m.Name || v.Projected == nil {
				continue
			}
			assert.True(t, m.ReadOnly)
			for _, src := range v.Projected.Sources {
				require.NotNil(t, src.Secret)
				for _, item := range src.Secret.Items {
					files[m.MountPath+"/"+item.Path] = src.Secret.Name + "/" + item.Key
				}
			}
		}
	}
	cert := str(o.values, "temporal.tls.clientCertSecretName")
	ca := str(o.values, "temporal.tls.ca.secretName")
	want := map[string]string{}
	if cert != "" {
		want["ASSENT_TEMPORAL_TLS_CERT"] = cert + "/tls.crt"
		want["ASSENT_TEMPORAL_TLS_KEY"] = cert + "/tls.key"
	}
	if ca != "" {
		want["ASSENT_TEMPORAL_TLS_CA"] = ca + "/" + str(o.values, "temporal.tls.ca.key")
	}
	for _, name := range []string{"ASSENT_TEMPORAL_TLS_CERT", "ASSENT_TEMPORAL_TLS_KEY", "ASSENT_TEMPORAL_TLS_CA"} {
		if want[name] == "" {
			assert.NotContains(t, env, name)
			continue
		}
		if assert.Contains(t, env, name) {
			assert.Equal(t, want[name], files[env[name].Value], "%s=%s", name, env[name].Value)
		}
	}
	if sn := str(o.values, "temporal.tls.serverName"); sn != "" {
		assert.Equal(t, sn, env["ASSENT_TEMPORAL_TLS_SERVER_NAME"].Value)
	}
	if key := str(o.values, "temporal.apiKey.secretName"); key != "" {
		ref := env["ASSENT_TEMPORAL_API_KEY"].ValueFrom
		require.NotNil(t, ref)
		assert.Equal(t, key, ref.SecretKeyRef.Name)
	} else {
		assert.NotContains(t, env, "ASSENT_TEMPORAL_API_KEY")
	}
}

// checkNoSecretValues: the chart writes no Secret and no secret's value;
// each secret variable comes from the Secret and key the values name.
func checkNoSecretValues(t *testing.T, o *objects) {
	assert.NotContains(t, o.text, "kind: Secret")
	refs := map[string]string{"ASSENT_SECRET_KEY": "secretKey", "ASSENT_DATABASE_URL": "postgres.url",
		"ASSENT_TEMPORAL_API_KEY": "temporal.apiKey", "ASSENT_SMTP_PASSWORD": "smtp.password",
		"ASSENT_METRICS_TOKEN": "metrics.token", "ASSENT_OIDC_CLIENT_SECRET": "oidc.clientSecret"}
	for cmd, pod := range commands(t, o) {
		for _, e := range pod.Spec.Containers[0].Env {
			if !slices.Contains(secrets, e.Name) {
				continue
			}
			assert.Empty(t, e.Value, "%s: %s written in the manifest", cmd, e.Name)
			if assert.NotNil(t, e.ValueFrom, "%s: %s", cmd, e.Name) && assert.NotNil(t, e.ValueFrom.SecretKeyRef, "%s: %s", cmd, e.Name) {
				if path, ok := refs[e.Name]; ok {
					assert.Equal(t, str(o.values, path+".secretName"), e.ValueFrom.SecretKeyRef.Name, e.Name)
					assert.Equal(t, str(o.values, path+".key"), e.ValueFrom.SecretKeyRef.Key, e.Name)
				}
			}
		}
	}
}

func checkServices(t *testing.T, o *objects) {
	pods := commands(t, o)
	require.Len(t, o.services, 2)
	for name, s := range o.services {
		sel := labels.SelectorFromSet(s.Spec.Selector)
		require.Len(t, s.Spec.Ports, 1)
		target := s.Spec.Ports[0].TargetPort.StrVal
		require.NotEmpty(t, target, "%s targets a port by name", name)
		var selected []string
		for cmd, pod := range pods {
			if !sel.Matches(labels.Set(pod.Labels)) {
				continue
			}
			for _, p := range pod.Spec.Containers[0].Ports {
				if p.Name == target {
					selected = append(selected, cmd)
				}
			}
		}
		if strings.HasSuffix(name, "-metrics") {
			assert.Equal(t, corev1.ServiceTypeClusterIP, s.Spec.Type, "metrics stay inside the cluster")
			assert.ElementsMatch(t, []string{"serve", "worker"}, selected, "%s's endpoints", name)
		} else {
			assert.Equal(t, []string{"serve"}, selected, "%s's endpoints", name)
			assert.Equal(t, "http", target)
		}
	}
}

func checkIngress(t *testing.T, o *objects) {
	if str(o.values, "ingress.enabled") != "true" {
		assert.Empty(t, o.ingresses)
		return
	}
	require.Len(t, o.ingresses, 1)
	ing := o.ingresses[0]
	base, err := url.Parse(str(o.values, "baseURL"))
	require.NoError(t, err)
	hosts := []string{base.Hostname()}
	if d := str(o.values, "reportsDomain"); d != "" {
		hosts = append(hosts, "*."+d)
	}
	var ruled []string
	for _, r := range ing.Spec.Rules {
		ruled = append(ruled, r.Host)
		require.Len(t, r.HTTP.Paths, 1)
		b := r.HTTP.Paths[0].Backend.Service
		require.NotNil(t, b)
		s := o.services[b.Name]
		require.NotNil(t, s, "the Ingress sends %s to a Service the chart does not make", r.Host)
		assert.Equal(t, s.Spec.Ports[0].Name, b.Port.Name)
		assert.Equal(t, "http", b.Port.Name, "never the metrics")
	}
	assert.Equal(t, hosts, ruled)
	if str(o.values, "ingress.tls.enabled") == "true" {
		require.Len(t, ing.Spec.TLS, len(hosts))
		assert.Equal(t, []string{hosts[0]}, ing.Spec.TLS[0].Hosts)
		assert.Equal(t, str(o.values, "ingress.tls.secretName"), ing.Spec.TLS[0].SecretName)
		if len(hosts) > 1 {
			assert.Equal(t, []string{hosts[1]}, ing.Spec.TLS[1].Hosts)
			assert.Equal(t, str(o.values, "ingress.tls.reportsSecretName"), ing.Spec.TLS[1].SecretName)
		}
	}
	if c := str(o.values, "ingress.className"); c != "" {
		assert.Equal(t, c, *ing.Spec.IngressClassName)
	}
}

func checkPDBs(t *testing.T, o *objects) {
	if str(o.values, "podDisruptionBudget.enabled") != "true" {
		assert.Empty(t, o.pdbs)
		return
	}
	require.Len(t, o.pdbs, 2)
	covered := map[string]int{}
	for _, p := range o.pdbs {
		sel, err := metav1Selector(p.Spec.Selector)
		require.NoError(t, err)
		require.NotNil(t, p.Spec.MaxUnavailable)
		for name, d := range o.deployments {
			if sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				covered[name]++
			}
		}
		for _, j := range o.jobs {
			assert.False(t, sel.Matches(labels.Set(j.Spec.Template.Labels)), "%s covers migrate", p.Name)
		}
	}
	for name := range o.deployments {
		assert.Equal(t, 1, covered[name], "%s is covered by one PodDisruptionBudget", name)
	}
}

// checkNetworkPolicies: with networkPolicy.enabled, every pod the chart
// runs is selected by one policy, which admits connections on exactly the
// ports its container names, from the peers the values give for each (any
// when none); egress is not restricted.
func checkNetworkPolicies(t *testing.T, o *objects) {
	if str(o.values, "networkPolicy.enabled") != "true" {
		assert.Empty(t, o.policies)
		return
	}
	peers := func(key string) []networkingv1.NetworkPolicyPeer {
		raw, err := o.values.PathValue("networkPolicy." + key)
		require.NoError(t, err)
		j, err := yaml.Marshal(raw)
		require.NoError(t, err)
		var out []networkingv1.NetworkPolicyPeer
		require.NoError(t, yaml.UnmarshalStrict(j, &out))
		if len(out) == 0 {
			return nil
		}
		return out
	}
	// serve's probes use its HTTP port: once that port is narrowed, the
	// probes' peers are admitted beside the ingress's.
	http := peers("ingressFrom")
	if http != nil {
		http = append(http, peers("probesFrom")...)
	}
	from := map[string][]networkingv1.NetworkPolicyPeer{"http": http, "metrics": peers("metricsFrom"), "probes": peers("probesFrom")}
	pods := commands(t, o)
	require.Len(t, o.policies, len(pods))
	for cmd, pod := range pods {
		var selecting []*networkingv1.NetworkPolicy
		for _, p := range o.policies {
			sel, err := metav1Selector(&p.Spec.PodSelector)
			require.NoError(t, err)
			if sel.Matches(labels.Set(pod.Labels)) {
				selecting = append(selecting, p)
			}
		}
		require.Len(t, selecting, 1, "%s's pods are selected by one NetworkPolicy", cmd)
		p := selecting[0]
		assert.Equal(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, p.Spec.PolicyTypes, "%s: egress stays open", cmd)
		// The peers each port admits, across the rules naming it (nil:
		// any peer, when one rule names no peers).
		admitted := map[string][]networkingv1.NetworkPolicyPeer{}
		anyPeer := map[string]bool{}
		for _, rule := range p.Spec.Ingress {
			require.Len(t, rule.Ports, 1)
			require.NotNil(t, rule.Ports[0].Port)
			port := rule.Ports[0].Port.StrVal
			anyPeer[port] = anyPeer[port] || len(rule.From) == 0
			admitted[port] = append(admitted[port], rule.From...)
		}
		for port := range anyPeer {
			if anyPeer[port] {
				admitted[port] = nil
			}
		}
		var named []string
		for _, port := range pod.Spec.Containers[0].Ports {
			named = append(named, port.Name)
			assert.Contains(t, admitted, port.Name, "%s's port %s is admitted", cmd, port.Name)
			assert.Equal(t, from[port.Name], admitted[port.Name], "%s's port %s admits the peers the values give", cmd, port.Name)
		}
		assert.Len(t, admitted, len(named), "%s admits only the ports its container names: %v", cmd, named)
	}
}

func checkServiceMonitor(t *testing.T, o *objects) {
	if str(o.values, "metrics.serviceMonitor.enabled") != "true" {
		assert.Empty(t, o.monitors)
		return
	}
	require.Len(t, o.monitors, 1)
	sm := o.monitors[0]
	sel, err := metav1Selector(&sm.Spec.Selector)
	require.NoError(t, err)
	var selected []*corev1.Service
	for _, s := range o.services {
		if sel.Matches(labels.Set(s.Labels)) {
			selected = append(selected, s)
		}
	}
	require.Len(t, selected, 1, "the ServiceMonitor selects the metrics Service alone")
	assert.True(t, strings.HasSuffix(selected[0].Name, "-metrics"))
	require.Len(t, sm.Spec.Endpoints, 1)
	ep := sm.Spec.Endpoints[0]
	assert.Equal(t, selected[0].Spec.Ports[0].Name, ep.Port)
	assert.Equal(t, "/metrics", ep.Path)
	for k, v := range o.values["metrics"].(map[string]any)["serviceMonitor"].(map[string]any)["labels"].(map[string]any) {
		assert.Equal(t, v, sm.Labels[k], "Prometheus selects it by %s", k)
	}
	if token := str(o.values, "metrics.token.secretName"); token != "" {
		require.NotNil(t, ep.Authorization, "the scrape bears ASSENT_METRICS_TOKEN")
		assert.Equal(t, "Bearer", ep.Authorization.Type)
		assert.Equal(t, token, ep.Authorization.Credentials.Name)
		assert.Equal(t, str(o.values, "metrics.token.key"), ep.Authorization.Credentials.Key)
	} else {
		assert.Nil(t, ep.Authorization)
	}
}

// operations is docs/operations.md, "Running on Kubernetes".
func operations(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/operations.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "\n## Running on Kubernetes\n")
	require.True(t, ok)
	section, _, _ = strings.Cut(section, "\n## ")
	return section
}

// block is the fenced block of the given language after the marker.
func block(t *testing.T, doc, marker, lang string) string {
	t.Helper()
	_, after, ok := strings.Cut(doc, marker)
	require.True(t, ok, "no %q", marker)
	_, after, ok = strings.Cut(after, "```"+lang+"\n")
	require.True(t, ok)
	body, _, ok := strings.Cut(after, "\n```")
	require.True(t, ok)
	return body
}

// TestOperationsExample: the values docs/operations.md shows render and
// pass every check, and the Secrets its kubectl commands create hold
// every key the pods then read.
func TestOperationsExample(t *testing.T) {
	doc := operations(t)
	values := block(t, doc, "<!-- deploy/helm/chart_test.go renders this block", "yaml")
	o := render(t, values)
	checkWorkloads(t, o)
	checkServices(t, o)
	checkIngress(t, o)
	checkPDBs(t, o)
	checkServiceMonitor(t, o)
	checkNoSecretValues(t, o)

	created := map[string]bool{} // secret/key
	kubectl := strings.ReplaceAll(block(t, doc, "**The Secrets, first.**", "sh"), "\\\n", " ")
	for _, line := range strings.Split(kubectl, "\n") {
		f := strings.Fields(line)
		i := slices.Index(f, "secret")
		if len(f) == 0 || f[0] != "kubectl" || i < 0 || i+2 >= len(f) {
			continue
		}
		name := f[i+2]
		if f[i+1] == "tls" {
			created[name+"/tls.crt"], created[name+"/tls.key"] = true, true
		}
		for _, arg := range f[i+3:] {
			for _, flag := range []string{"--from-literal=", "--from-file="} {
				if kv, ok := strings.CutPrefix(arg, flag); ok {
					key, _, _ := strings.Cut(kv, "=")
					created[name+"/"+key] = true
				}
			}
		}
	}
	require.NotEmpty(t, created)
	for cmd, pod := range commands(t, o) {
		for _, e := range pod.Spec.Containers[0].Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				ref := e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
				assert.True(t, created[ref], "%s reads %s from %s, which the commands do not create", cmd, e.Name, ref)
			}
		}
		for _, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for _, src := range v.Projected.Sources {
				for _, item := range src.Secret.Items {
					ref := src.Secret.Name + "/" + item.Key
					assert.True(t, created[ref], "%s mounts %s, which the commands do not create", cmd, ref)
				}
			}
		}
	}

	// The image named in the values is the one the build command makes.
	build := block(t, doc, "**The image.**", "sh")
	image := str(o.values, "image.repository") + ":" + str(o.values, "image.tag")
	assert.Contains(t, build, "docker build -t "+image+" .")
	assert.Contains(t, build, "docker push "+image)
	assert.Contains(t, doc, "helm install assent deploy/helm/assent -n assent -f my-values.yaml")
}

// TestChartRefuses: a value missing or misspelled, or a secret written
// as a value, fails the render instead of deploying something else.
func TestChartRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ values, says string }{
		"no base URL":             {``, "baseURL is required"},
		"a base URL with a query": {`baseURL: "https://assent.example.com/?x=1"`, "baseURL"},
		"a misspelled value":      {minimal + "\ntemporal: {namespase: prod}", "namespase"},
		"a secret as a value":     {minimal + "\nsecretKey: {secretName: assent, key: secret-key, value: c2VjcmV0}", "'value' not allowed"},
		"a database URL written":  {minimal + "\npostgres: {url: 'postgres://assent:pw@db/assent'}", "/postgres/url"},
		"no secret key Secret":    {minimal + "\nsecretKey: {secretName: '', key: k}", "secretKey.secretName is required"},
		"TLS without its Secret":  {minimal + "\ningress: {enabled: true, tls: {enabled: true}}", "ingress.tls.secretName is required"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := renderValues(t, tc.values)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.says)
		})
	}
}

// TestImageTag: with image.tag unset the chart runs its appVersion,
// which is the version the binary reports (sdk/go's assent.Version).
func TestImageTag(t *testing.T) {
	c := loadChart(t)
	assert.Equal(t, assent.Version, c.Metadata.AppVersion, "bump the chart's appVersion (and version) with the binary's")
	o := render(t, minimal)
	for _, d := range o.deployments {
		assert.Equal(t, "ghcr.io/assent-hq/assent:"+assent.Version, d.Spec.Template.Spec.Containers[0].Image)
	}
}

// TestLint runs Helm's linter (helm lint --strict) over the chart with
// its defaults and with every value set: no errors, no warnings.
func TestLint(t *testing.T) {
	for name, values := range map[string]string{"defaults": "", "minimal": minimal, "full": full, "api key": apiKey} {
		t.Run(name, func(t *testing.T) {
			vals, err := chartutil.ReadValues([]byte(values))
			require.NoError(t, err)
			l := lint.All(chartDir, vals, "assent", true)
			for _, m := range l.Messages {
				if m.Severity >= support.WarningSev {
					t.Error(m.Error())
				} else {
					t.Log(m.Error())
				}
			}
		})
	}
}

func metav1Selector(s *metav1.LabelSelector) (labels.Selector, error) {
	return metav1.LabelSelectorAsSelector(s)
}

func ptr[T any](v T) *T { return &v }
