package store

import (
	"strings"
)

// CILabels are the labels a CI system's environment gives a run: the commit, the branch,
// the pull or merge request, the runner, the CI system and its run's id, as GitHub Actions,
// GitLab CI, Jenkins, Buildkite and CircleCI set them. getenv is os.Getenv (a map's lookup in
// tests); outside CI the result is empty. Inside CI they name the commit better than git in
// the working directory can (a pull request's checkout is a detached merge commit).
func CILabels(getenv func(string) string) map[string]string {
	m := map[string]string{}
	set := func(k string, vals ...string) {
		for _, v := range vals {
			if v = strings.TrimSpace(v); v != "" {
				m[k] = v
				return
			}
		}
	}
	switch {
	case getenv("GITHUB_ACTIONS") == "true":
		m["ci"] = "github"
		set("commit", getenv("GITHUB_SHA"))
		set("branch", getenv("GITHUB_HEAD_REF"), getenv("GITHUB_REF_NAME"))
		if ref := getenv("GITHUB_REF"); strings.HasPrefix(ref, "refs/pull/") {
			set("pr", strings.SplitN(strings.TrimPrefix(ref, "refs/pull/"), "/", 2)[0])
			if m["branch"] == getenv("GITHUB_REF_NAME") && getenv("GITHUB_HEAD_REF") == "" {
				delete(m, "branch") // "123/merge" names no branch
			}
		}
		set("runner", getenv("RUNNER_NAME"))
		set("ci_run", getenv("GITHUB_RUN_ID"))
	case getenv("GITLAB_CI") == "true":
		m["ci"] = "gitlab"
		set("commit", getenv("CI_COMMIT_SHA"))
		set("branch", getenv("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME"), getenv("CI_COMMIT_BRANCH"), getenv("CI_COMMIT_REF_NAME"))
		set("pr", getenv("CI_MERGE_REQUEST_IID"))
		set("runner", getenv("CI_RUNNER_DESCRIPTION"), getenv("CI_RUNNER_ID"))
		set("ci_run", getenv("CI_PIPELINE_ID"))
	case getenv("BUILDKITE") == "true":
		m["ci"] = "buildkite"
		set("commit", getenv("BUILDKITE_COMMIT"))
		set("branch", getenv("BUILDKITE_BRANCH"))
		if pr := getenv("BUILDKITE_PULL_REQUEST"); pr != "false" {
			set("pr", pr)
		}
		set("runner", getenv("BUILDKITE_AGENT_NAME"))
		set("ci_run", getenv("BUILDKITE_BUILD_NUMBER"))
	case getenv("CIRCLECI") == "true":
		m["ci"] = "circleci"
		set("commit", getenv("CIRCLE_SHA1"))
		set("branch", getenv("CIRCLE_BRANCH"))
		if u := getenv("CIRCLE_PULL_REQUEST"); u != "" {
			set("pr", u[strings.LastIndexByte(u, '/')+1:])
		}
		set("runner", getenv("CIRCLE_NODE_INDEX"))
		set("ci_run", getenv("CIRCLE_BUILD_NUM"))
	case getenv("JENKINS_URL") != "":
		m["ci"] = "jenkins"
		set("commit", getenv("GIT_COMMIT"))
		set("branch", getenv("CHANGE_BRANCH"), getenv("BRANCH_NAME"), strings.TrimPrefix(getenv("GIT_BRANCH"), "origin/"))
		set("pr", getenv("CHANGE_ID"))
		set("runner", getenv("NODE_NAME"))
		set("ci_run", getenv("BUILD_NUMBER"))
	}
	return m
}
