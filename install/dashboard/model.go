package dashboard

// The part of Grafana's dashboard JSON model karpgate uses. Field order is
// the order Grafana itself writes, so an exported copy diffs cleanly.

// Dashboard is one Grafana dashboard.
type Dashboard struct {
	Annotations   Annotations `json:"annotations"`
	Description   string      `json:"description"`
	Editable      bool        `json:"editable"`
	GraphTooltip  int         `json:"graphTooltip"`
	Links         []any       `json:"links"`
	Panels        []Panel     `json:"panels"`
	Refresh       string      `json:"refresh"`
	SchemaVersion int         `json:"schemaVersion"`
	Tags          []string    `json:"tags"`
	Templating    Templating  `json:"templating"`
	Time          TimeRange   `json:"time"`
	Timezone      string      `json:"timezone"`
	Title         string      `json:"title"`
	UID           string      `json:"uid"`
	Version       int         `json:"version"`
}

// Annotations are the dashboard's annotation queries.
type Annotations struct {
	List []Annotation `json:"list"`
}

// Annotation marks times on every time series panel.
type Annotation struct {
	BuiltIn     int            `json:"builtIn,omitempty"`
	Datasource  *DataSourceRef `json:"datasource"`
	Enable      bool           `json:"enable"`
	Expr        string         `json:"expr,omitempty"`
	Hide        bool           `json:"hide"`
	IconColor   string         `json:"iconColor"`
	Name        string         `json:"name"`
	Step        string         `json:"step,omitempty"`
	TagKeys     string         `json:"tagKeys,omitempty"`
	TitleFormat string         `json:"titleFormat,omitempty"`
	Type        string         `json:"type,omitempty"`
}

// DataSourceRef points at a data source, here always through the
// dashboard's data source variable.
type DataSourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Panel is a row or a visualisation.
type Panel struct {
	Collapsed   *bool          `json:"collapsed,omitempty"`
	Datasource  *DataSourceRef `json:"datasource,omitempty"`
	Description string         `json:"description,omitempty"`
	FieldConfig *FieldConfig   `json:"fieldConfig,omitempty"`
	GridPos     GridPos        `json:"gridPos"`
	ID          int            `json:"id"`
	Options     map[string]any `json:"options,omitempty"`
	Panels      []Panel        `json:"panels,omitempty"`
	Targets     []Target       `json:"targets,omitempty"`
	Title       string         `json:"title"`
	// Transformations reshape a table's frames: join, hide, rename.
	Transformations []any  `json:"transformations,omitempty"`
	Type            string `json:"type"`
}

// GridPos places a panel on the 24-column grid.
type GridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

// Target is one query of a panel.
type Target struct {
	Datasource *DataSourceRef `json:"datasource"`
	Expr       string         `json:"expr"`
	// Format "table" gives a table panel one row per series, its labels
	// as columns.
	Format       string `json:"format,omitempty"`
	Instant      bool   `json:"instant,omitempty"`
	LegendFormat string `json:"legendFormat"`
	Range        bool   `json:"range"`
	RefID        string `json:"refId"`
}

// FieldConfig sets units, thresholds and drawing.
type FieldConfig struct {
	Defaults  FieldDefaults `json:"defaults"`
	Overrides []any         `json:"overrides"`
}

// FieldDefaults apply to every series of a panel.
type FieldDefaults struct {
	Custom     map[string]any `json:"custom,omitempty"`
	Decimals   *int           `json:"decimals,omitempty"`
	Mappings   []any          `json:"mappings,omitempty"`
	Min        *float64       `json:"min,omitempty"`
	Thresholds *Thresholds    `json:"thresholds,omitempty"`
	Unit       string         `json:"unit,omitempty"`
}

// Thresholds colour values.
type Thresholds struct {
	Mode  string `json:"mode"`
	Steps []Step `json:"steps"`
}

// Step is one threshold; the first has no value.
type Step struct {
	Color string   `json:"color"`
	Value *float64 `json:"value"`
}

// Templating holds the dashboard's variables.
type Templating struct {
	List []Variable `json:"list"`
}

// Variable is a data source picker or a query-backed choice.
type Variable struct {
	AllValue   string         `json:"allValue,omitempty"`
	Current    map[string]any `json:"current"`
	Datasource *DataSourceRef `json:"datasource,omitempty"`
	Definition string         `json:"definition,omitempty"`
	Hide       int            `json:"hide"`
	IncludeAll bool           `json:"includeAll"`
	Label      string         `json:"label"`
	Multi      bool           `json:"multi"`
	Name       string         `json:"name"`
	Options    []any          `json:"options"`
	Query      string         `json:"query"`
	Refresh    int            `json:"refresh"`
	Regex      string         `json:"regex"`
	Sort       int            `json:"sort,omitempty"`
	Type       string         `json:"type"`
}

// TimeRange is the default time range.
type TimeRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}
