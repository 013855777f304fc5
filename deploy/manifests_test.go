package deploy

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// manifests are the objects of kubernetes/*.yaml, decoded strictly into
// their types.
type manifests struct {
	deployment *appsv1.Deployment
	service    *corev1.Service
	configMap  *corev1.ConfigMap
	secret     *corev1.Secret
	pdb        *policyv1.PodDisruptionBudget
}

func load(t *testing.T) manifests {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("kubernetes", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var m manifests
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, doc := range bytes.Split(b, []byte("\n---\n")) {
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			var tm metav1.TypeMeta
			require.NoError(t, yaml.Unmarshal(doc, &tm), "%s #%d", f, i)
			var obj any
			switch tm.APIVersion + " " + tm.Kind {
			case "apps/v1 Deployment":
				m.deployment = &appsv1.Deployment{}
				obj = m.deployment
			case "v1 Service":
				m.service = &corev1.Service{}
				obj = m.service
			case "v1 ConfigMap":
				m.configMap = &corev1.ConfigMap{}
				obj = m.configMap
			case "v1 Secret":
				m.secret = &corev1.Secret{}
				obj = m.secret
			case "policy/v1 PodDisruptionBudget":
				m.pdb = &policyv1.PodDisruptionBudget{}
				obj = m.pdb
			default:
				t.Fatalf("%s #%d: unexpected %s %s", f, i, tm.APIVersion, tm.Kind)
			}
			// Strict: a misspelt or misplaced field is an error, not ignored.
			require.NoError(t, yaml.UnmarshalStrict(doc, obj), "%s #%d", f, i)
		}
	}
	require.NotNil(t, m.deployment, "a Deployment")
	require.NotNil(t, m.service, "a Service")
	require.NotNil(t, m.configMap, "a ConfigMap")
	require.NotNil(t, m.secret, "a Secret")
	require.NotNil(t, m.pdb, "a PodDisruptionBudget")
	return m
}

func TestManifests(t *testing.T) {
	m := load(t)
	d := m.deployment
	podLabels := labels.Set(d.Spec.Template.Labels)
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	require.NoError(t, err)
	assert.True(t, sel.Matches(podLabels), "the Deployment selects its pods")
	assert.True(t, labels.SelectorFromSet(m.service.Spec.Selector).Matches(podLabels), "the Service selects the pods")
	pdbSel, err := metav1.LabelSelectorAsSelector(m.pdb.Spec.Selector)
	require.NoError(t, err)
	assert.True(t, pdbSel.Matches(podLabels), "the PodDisruptionBudget covers the pods")
	require.NotNil(t, d.Spec.Replicas)
	assert.Greater(t, *d.Spec.Replicas, int32(1), "several replicas")
	if m.pdb.Spec.MaxUnavailable != nil {
		assert.Less(t, m.pdb.Spec.MaxUnavailable.IntValue(), int(*d.Spec.Replicas))
	}

	require.Len(t, d.Spec.Template.Spec.Containers, 1)
	c := d.Spec.Template.Spec.Containers[0]
	require.NotEmpty(t, c.Args)
	assert.Equal(t, "serve", c.Args[0])
	for _, a := range c.Args {
		assert.False(t, strings.HasPrefix(a, "--tenants") || strings.HasPrefix(a, "--plugin-dir") || strings.HasPrefix(a, "--store"),
			"%s: the store comes from $REALIZAR_STORE, and excludes --tenants and --plugin-dir", a)
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	assert.Contains(t, c.Args, "--addr=0.0.0.0:"+strconv.Itoa(int(ports["http"])), "serve listens on the container's http port")
	assert.Equal(t, "http", m.service.Spec.Ports[0].TargetPort.String())
	// The metrics (labelled by tenant) have a port of their own, which the
	// Service does not route to.
	require.Contains(t, ports, "metrics")
	assert.Contains(t, c.Args, "--metrics-addr=0.0.0.0:"+strconv.Itoa(int(ports["metrics"])), "serve serves its metrics on the metrics port")
	for _, p := range m.service.Spec.Ports {
		assert.NotEqual(t, "metrics", p.TargetPort.String(), "the Service exposes no metrics")
		assert.NotEqual(t, ports["metrics"], p.TargetPort.IntVal, "the Service exposes no metrics")
	}

	probes := map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe}
	for name, want := range map[string]string{"readiness": "/ready", "liveness": "/health"} {
		p := probes[name]
		require.NotNil(t, p, name)
		require.NotNil(t, p.HTTPGet, name)
		assert.Equal(t, want, p.HTTPGet.Path, name)
		assert.Equal(t, "http", p.HTTPGet.Port.String(), name)
	}

	var store *corev1.EnvVar
	for i := range c.Env {
		if c.Env[i].Name == "REALIZAR_STORE" {
			store = &c.Env[i]
		}
	}
	require.NotNil(t, store, "REALIZAR_STORE is set")
	require.NotNil(t, store.ValueFrom)
	require.NotNil(t, store.ValueFrom.SecretKeyRef, "the database URL comes from the Secret")
	assert.Equal(t, m.secret.Name, store.ValueFrom.SecretKeyRef.Name)
	assert.Contains(t, m.secret.StringData, store.ValueFrom.SecretKeyRef.Key)
	assert.True(t, strings.HasPrefix(m.secret.StringData[store.ValueFrom.SecretKeyRef.Key], "postgres://"))

	require.Len(t, c.EnvFrom, 1)
	require.NotNil(t, c.EnvFrom[0].ConfigMapRef)
	assert.Equal(t, m.configMap.Name, c.EnvFrom[0].ConfigMapRef.Name)
	assert.Contains(t, m.configMap.Data, "REALIZAR_MODEL")

	mounts := map[string]bool{}
	for _, v := range d.Spec.Template.Spec.Volumes {
		mounts[v.Name] = true
	}
	for _, vm := range c.VolumeMounts {
		assert.True(t, mounts[vm.Name], "volume %s is declared", vm.Name)
	}
	assert.True(t, strings.HasPrefix(m.configMap.Data["REALIZAR_MODEL"], "/models/"), "the model is on the models volume")
}

// TestStrictDecodingRefuses: the check can fail — an unknown field is refused.
func TestStrictDecodingRefuses(t *testing.T) {
	var d appsv1.Deployment
	err := yaml.UnmarshalStrict([]byte("apiVersion: apps/v1\nkind: Deployment\nspec:\n  replica: 3\n"), &d)
	assert.Error(t, err)
}
