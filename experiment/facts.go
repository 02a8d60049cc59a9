package experiment

// Facts describe a scenario for the views, before the data are prepared and
// again once they are (Family.Facts).
type Facts struct {
	// Summary is the one-line description under the title (M clients, d,
	// N, σ, heterogeneity…), with what is known once the data are ready
	// (e.g. the realised Γ, docs/papers.md §8).
	Summary string
	// Charts names the metrics the run view draws, in order.
	Charts []string
	// Levels are horizontal dashed lines: references (the error of pooled
	// least squares) and, marked Theory, the papers' predictions.
	Levels []Level
	// Notes say how defaults were resolved (e.g. "bandwidth σ²=… from the
	// median pairwise distance"): shown once by every front end.
	Notes []string
	// Warnings say that something ran outside the regime the paper covers,
	// or fell back: never passed over silently.
	Warnings []string
	// Clusters, when set, asks for the cluster view (paper 004).
	Clusters *ClusterInfo
	// Params are the hyper-parameters the data were prepared with and how
	// each was chosen (e.g. the bandwidth σ²: "median heuristic", "tuned",
	// "given"), and derived quantities worth reporting (FedNewton's Υ):
	// printed by `fedscope run` and written in the JSON-lines header.
	Params []Param
}

// Param is a hyper-parameter of a prepared scenario and how it was chosen.
type Param struct {
	Name  string
	Value float64
	How   string // e.g. "given", "tuned", "median heuristic", "computed"
}

// Level is a horizontal line on the chart of one metric.
type Level struct {
	Metric string  // the chart it belongs to
	Value  float64 // its height
	Label  string  // legend text, e.g. "pooled least squares"
	Theory bool    // a paper's prediction (toggled with the theory overlays)
}

// ClusterInfo is what the cluster view needs to know about the data: the
// number of clusters, the true label and size of every client, and the
// constants the family asks the view to print beside the assignments (the
// mixture's γ and κ, docs/papers.md §8: "the UI should print gamma and
// kappa").
type ClusterInfo struct {
	K         int
	Labels    []int
	Sizes     []int
	Constants []Constant
}

// Constant is a named number and what it means, printed as
// "γ=0.12: η × the largest local curvature …".
type Constant struct {
	Name    string
	Value   float64
	Meaning string
}
