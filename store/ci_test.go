package store

import (
	"fmt"
	"testing"
)

func TestCILabels(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"CI": "true"}, "map[]"}, // an unknown CI: git's labels stay
		{map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_SHA": "abc", "GITHUB_REF": "refs/heads/main", "GITHUB_REF_NAME": "main", "RUNNER_NAME": "r1", "GITHUB_RUN_ID": "77"},
			"map[branch:main ci:github ci_run:77 commit:abc runner:r1]"},
		{map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_SHA": "abc", "GITHUB_REF": "refs/pull/42/merge", "GITHUB_REF_NAME": "42/merge", "GITHUB_HEAD_REF": "fix-x"},
			"map[branch:fix-x ci:github commit:abc pr:42]"},
		{map[string]string{"GITLAB_CI": "true", "CI_COMMIT_SHA": "def", "CI_COMMIT_REF_NAME": "feature", "CI_MERGE_REQUEST_IID": "9", "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature", "CI_RUNNER_ID": "5", "CI_PIPELINE_ID": "100"},
			"map[branch:feature ci:gitlab ci_run:100 commit:def pr:9 runner:5]"},
		{map[string]string{"JENKINS_URL": "http://127.0.0.1:8080/", "GIT_COMMIT": "123", "GIT_BRANCH": "origin/main", "NODE_NAME": "agent-1", "BUILD_NUMBER": "3"},
			"map[branch:main ci:jenkins ci_run:3 commit:123 runner:agent-1]"},
	} {
		if got := fmt.Sprint(CILabels(func(k string) string { return tc.env[k] })); got != tc.want {
			t.Errorf("CILabels(%v) = %s; want %s", tc.env, got, tc.want)
		}
	}
}
