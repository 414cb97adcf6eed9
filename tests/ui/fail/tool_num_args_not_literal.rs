use gangway::tool::tool;

const TWO: usize = 2;

#[tool]
struct Plot {
    #[arg(long, num_args = TWO)]
    point: Vec<f64>,
}

fn main() {}
