//! The generated code names everything by absolute path, so it compiles in a
//! module without the prelude.
#[no_implicit_prelude]
mod commands {
    use ::gangway::IpcCommand;

    /// Count characters.
    #[derive(::std::clone::Clone, ::serde::Serialize, IpcCommand)]
    #[ipc(response = ::gangway::ipc::CommandResult<usize>)]
    #[serde(default)]
    pub struct Count {
        #[ipc(positional)]
        pub text: ::std::string::String,
        #[ipc(stdin)]
        pub extra: ::std::option::Option<::std::vec::Vec<u8>>,
        pub times: u32,
        #[ipc(method)]
        #[serde(skip)]
        pub method: ::std::string::String,
    }

    impl ::std::default::Default for Count {
        fn default() -> Self {
            Count {
                text: ::std::string::String::new(),
                extra: ::std::option::Option::None,
                times: 2,
                method: ::std::string::String::new(),
            }
        }
    }

    impl Count {
        async fn handle(&mut self) -> ::gangway::ipc::CommandResult<usize> {
            ::std::result::Result::Ok(self.text.len() * self.times as usize)
        }
    }
}

fn main() {
    use gangway::IpcCommand;
    let mut count = commands::Count::default();
    count.apply_args(&rmp_serde::to_vec_named(&serde_json::json!({"text": "abc"})).unwrap()).unwrap();
    assert_eq!(count.times, 2);
    assert_eq!(count.text, "abc");
}
